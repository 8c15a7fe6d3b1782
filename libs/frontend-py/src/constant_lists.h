// Lists of integers a kernel names from its enclosing scope (`off = [0, 32]` in a function that
// builds a program per configuration), written into the kernel's syntax tree as list literals.
#pragma once

#include "ast_node.h"
#include "type_resolver.h"

namespace pypto::frontend {

// Replaces each read of a name bound in `constants` to a list of integers, in the body of the
// function definition `def`, by a list literal of those integers at the name's position, so that
// every place a literal list is accepted (offsets, shapes, valid_shape=...) accepts the name. A
// name the function binds itself (a parameter, an assignment, a loop variable) is its own and is
// left alone.
void InlineConstantLists(py::handle def, const Constants& constants);

}  // namespace pypto::frontend
