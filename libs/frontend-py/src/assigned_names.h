// Which plain names a block of Python statements assigns, looking into nested loops, branches and
// scopes: the candidates for values carried across loop iterations.
#pragma once

#include <string>
#include <vector>

#include "ast_node.h"

namespace pypto::frontend {

// Names bound by `name = ...` / `name: T = ...` (and tuple targets) or `with ... as name:` anywhere in
// `statements`, in order of first assignment. Loop variables are not included: a loop's variable is
// its own.
std::vector<std::string> AssignedNames(py::handle statements);

// Names whose element is assigned, `name[i] = ...`, anywhere in `statements`, in order of first
// assignment: in orchestration code, the arrays a loop updates (`tids[i] = tid`).
std::vector<std::string> SubscriptAssignedNames(py::handle statements);

// Names `x` of the statements `pl.write(x, indices, value)` (any spelling) anywhere in `statements`,
// in order of first write.
std::vector<std::string> ElementWrittenNames(py::handle statements);

// Whether `node` is a call to `pl.yield_`.
bool IsYieldCall(py::handle node);

}  // namespace pypto::frontend
