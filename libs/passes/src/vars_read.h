// The variables a piece of IR reads and those it defines, as the passes ask when they move, outline
// or fuse statements.
#pragma once

#include <type_traits>
#include <unordered_set>
#include <vector>

#include "pypto/ir/functor.h"
#include "pypto/ir/stmt.h"

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

// The variables `stmts` define, at any depth: assignment targets, the loop variables, carried values
// and results of their loops, and the results of their ifs.
inline std::unordered_set<const ir::Var*> VarsDefined(const std::vector<ir::StmtPtr>& stmts) {
  struct Collector final : ir::IRVisitor {
    std::unordered_set<const ir::Var*> defs;
    void VisitStmt(const ir::StmtPtr& stmt) override {
      if (const auto* assign = stmt->As<ir::AssignStmt>()) defs.insert(assign->var().get());
      if (const auto* loop = stmt->As<ir::ForStmt>()) defs.insert(loop->loop_var().get());
      if (auto loop = ir::AsLoop(*stmt)) {
        for (const auto& iter_arg : loop->iter_args) defs.insert(iter_arg.var.get());
        for (const auto& var : loop->return_vars) defs.insert(var.get());
      }
      if (const auto* branch = stmt->As<ir::IfStmt>())
        for (const auto& var : branch->return_vars()) defs.insert(var.get());
      ir::IRVisitor::VisitStmt(stmt);
    }
  } collector;
  for (const auto& stmt : stmts) collector.VisitStmt(stmt);
  return std::move(collector.defs);
}

}  // namespace pypto::passes
