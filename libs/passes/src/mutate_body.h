// The step most rewriting passes take per function: run a mutator over its body and fail on the
// first error the mutator recorded.
#pragma once

#include "pypto/ir/diagnostic.h"
#include "pypto/ir/function.h"

namespace pypto::passes {

// `function` with its body rewritten by `mutator` (the same function when nothing changed), or the
// error the mutator recorded. `Mutator` is an ir::IRMutator with `std::optional<Diagnostic> error()`.
template <typename Mutator>
ir::Result<ir::FunctionPtr> MutateBody(const ir::FunctionPtr& function, Mutator& mutator) {
  auto body = mutator.MutateStmt(function->body());
  if (mutator.error()) return pypto::unexpected(*mutator.error());
  return body == function->body() ? function : function->WithBody(body);
}

}  // namespace pypto::passes
