// Which tensor values of a parsed body are the very buffer of a tensor named before it.
//
// In a kernel, `t = pl.assemble(t, tile, [i, 0])` (a store whose result is its destination) rebinds
// `t` to a new value that is still the same buffer; so does a kernel loop or branch that carries `t`
// and only updates it so. The frontend uses this to accept an orchestration loop whose kernel scope
// updates a tensor in place (it carries nothing: each iteration writes into the one tensor), and
// OutlineIncoreScopes to see which captured tensor a kernel writes.
#pragma once

#include <unordered_map>

#include "pypto/ir/stmt.h"

namespace pypto::ir {

class TensorAliases {
 public:
  // Follows the stores, kernel loops and branches of `body` in order.
  explicit TensorAliases(const StmtPtr& body);

  // The tensor `var` is an in-place update of (itself if it is no such update).
  const Var* Root(const Var* var) const;

 private:
  void Visit(const StmtPtr& stmt);
  void VisitLoop(const LoopView& loop);
  const Var* RootOf(const ExprPtr& expr) const;

  std::unordered_map<const Var*, const Var*> root_;
};

}  // namespace pypto::ir
