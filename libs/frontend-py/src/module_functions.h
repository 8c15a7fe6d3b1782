// Module-level `@pl.function` functions that a `@pl.program` calls by their bare name: kernels
// shared by several programs (`out = kernel_qk(q, k, out)`), defined once at the top of a file.
// They join the program as methods would: the syntax trees are rewritten so that such a function
// takes `self` and each call of it reads `self.<name>(...)`, and everything after that treats them
// as methods (positions in diagnostics stay those of the user's files).
#pragma once

#include <set>
#include <string>

#include "ast_node.h"

namespace pypto::frontend {

// Gives the function definition `def` a leading `self` parameter, placed at the definition.
void AddSelfParameter(py::handle def);

// In the syntax tree `tree`, rewrites each call `f(...)` of a name in `functions`, and each kernel
// named as the first argument of `pl.submit(f, ...)`, into `self.f`.
void BindModuleFunctionCalls(py::handle tree, const std::set<std::string>& functions);

}  // namespace pypto::frontend
