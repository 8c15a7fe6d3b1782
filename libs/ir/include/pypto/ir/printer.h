// Prints IR as readable, DSL-like Python text (`@pl.program class ...`).
#pragma once

#include <string>
#include <string_view>

#include "pypto/ir/program.h"

namespace pypto::ir {

std::string PrintProgram(const Program& program);
// `text` as a double-quoted Python string literal that reads back as `text` (quotes, backslashes and
// control characters escaped).
std::string PythonStringLiteral(std::string_view text);
std::string PrintFunction(const Function& function);
std::string PrintExpr(const ExprPtr& expr);

}  // namespace pypto::ir
