// `and`, `or` and `not` in the condition of an `if`, rewritten as nested ifs on one condition each.
#pragma once

#include <optional>
#include <string>

#include "ast_node.h"

namespace pypto::frontend {

// The `if` statement `if_stmt` with a boolean operator at the top of its condition, rewritten into
// nested `ast.If` nodes that test one operand each, in Python's order of evaluation: the second
// operand of `a and b` is only tested when `a` holds, that of `a or b` only when `a` does not.
//
//   if a and b: X else: Y   ->  if a: (if b: X else: Y) else: Y
//   if a or b:  X else: Y   ->  if a: X else: (if b: X else: Y)
//   if not a:   X else: Y   ->  if a: Y else: X
//
// A branch can be repeated (Y above, X below), which is what a device would run too: the IR has no
// boolean operators, and each copy keeps the source positions of the original statements.
// std::nullopt when the condition has no boolean operator at its top.
std::optional<py::object> ExpandBooleanCondition(py::handle if_stmt);

// Why a branch that ends in `pl.yield_` cannot be expanded (a repeated branch would need its
// results threaded through the nested if); empty when `if_stmt` can be expanded.
std::string BooleanConditionRefusal(py::handle if_stmt);

}  // namespace pypto::frontend
