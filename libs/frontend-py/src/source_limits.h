// What a source must stay within before the parser walks it.
#pragma once

#include "ast_node.h"
#include "pypto/ir/diagnostic.h"

namespace pypto::frontend {

// Expressions nest at most this deep: the parser walks them recursively, and Python's own limit on
// the `ast` it builds (about 3,000 levels in 3.11, more in later versions) leaves room to exhaust a
// thread's stack first, in a sanitized build at about 1,500 levels.
inline constexpr int kMaxExpressionDepth = 1000;

// Refuses, at the node where it is written, an integer literal beyond INT64 (every integer of a
// program is 64 bits; `ast.parse` accepts any size) and an expression nested deeper than
// kMaxExpressionDepth. Walks the tree without recursion.
ir::Result<bool> CheckSourceLimits(py::handle tree, const SourceMap& map);

}  // namespace pypto::frontend
