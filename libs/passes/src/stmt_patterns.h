// Small queries the passes make of a body when they match statement patterns.
#pragma once

#include <string_view>
#include <unordered_map>

#include "pypto/ir/functor.h"

namespace pypto::passes {

// `expr` when it is a call to the op `op`; null otherwise.
inline const ir::Call* AsOpCall(const ir::ExprPtr& expr, std::string_view op) {
  const auto* call = expr ? expr->As<ir::Call>() : nullptr;
  return call && call->is_op_call() && call->target_name() == op ? call : nullptr;
}

// The op call `stmt` assigns or evaluates when it is a call to `op`; null otherwise.
inline const ir::Call* OpCallOf(const ir::StmtPtr& stmt, std::string_view op) {
  if (const auto* assign = stmt->As<ir::AssignStmt>()) return AsOpCall(assign->value(), op);
  if (const auto* eval = stmt->As<ir::EvalStmt>()) return AsOpCall(eval->expr(), op);
  return nullptr;
}

// How many times `body` reads each variable.
inline std::unordered_map<const ir::Var*, int> ReadCounts(const ir::StmtPtr& body) {
  struct Counter final : ir::IRVisitor {
    std::unordered_map<const ir::Var*, int> reads;
    void VisitVar(const std::shared_ptr<const ir::Var>& var) override { ++reads[var.get()]; }
  } counter;
  counter.VisitStmt(body);
  return std::move(counter.reads);
}

}  // namespace pypto::passes
