// The variables a piece of IR reads, as the passes ask when they move or outline statements.
#pragma once

#include <type_traits>
#include <unordered_set>
#include <vector>

#include "pypto/ir/functor.h"

namespace pypto::passes {

// The variables `node` (a statement or an expression) reads, each once, in first-read order.
// Assignment targets and the variables a loop or an if defines are not reads.
template <typename Node>
std::vector<ir::VarPtr> VarsRead(const Node& node) {
  struct Collector final : ir::IRVisitor {
    std::vector<ir::VarPtr> vars;
    std::unordered_set<const ir::Var*> seen;
    void VisitVar(const std::shared_ptr<const ir::Var>& var) override {
      if (seen.insert(var.get()).second) vars.push_back(var);
    }
  } collector;
  if constexpr (std::is_convertible_v<Node, ir::ExprPtr>)
    collector.VisitExpr(node);
  else
    collector.VisitStmt(node);
  return std::move(collector.vars);
}

}  // namespace pypto::passes
