// Integer literals the IR can hold.
#pragma once

#include "ast_node.h"
#include "pypto/ir/diagnostic.h"

namespace pypto::frontend {

// Every integer of a program is 64 bits wide, so a literal beyond INT64 is refused where it is
// written, before any part of the parser converts it: `ast.parse` accepts integers of any size.
ir::Result<bool> CheckIntegerLiterals(py::handle tree, const SourceMap& map);

}  // namespace pypto::frontend
