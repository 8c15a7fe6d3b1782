// JSON form of a program: what a tool reads and writes to exchange IR without the DSL's parser.
// Every node is an object with a "kind"; a Var is written in full where it first appears (in
// document order) with a numeric "id", and as {"kind": "Var", "id": N} everywhere after, so
// reading gives back one shared Var object per id. Op calls name their op, looked up in the
// OpRegistry when read; the stored result type is kept as written (no type deduction).
#pragma once

#include <string>
#include <string_view>

#include "pypto/ir/diagnostic.h"
#include "pypto/ir/program.h"

namespace pypto::ir {

// The program as JSON text; `indent` < 0 writes one line, otherwise that many spaces per level.
std::string ProgramToJson(const Program& program, int indent = -1);

// Reads what ProgramToJson writes. Malformed input gives a diagnostic naming the JSON path of the
// fault, e.g. "missing field 'step' in a ForStmt at /functions/0/body/stmts/2".
Result<ProgramPtr> ProgramFromJson(std::string_view text);

}  // namespace pypto::ir
