#include "pypto/ir/functor.h"
#include "pypto/ir/valid_shape_rewrite.h"

namespace pypto::ir {

void IRVisitor::VisitExpr(const ExprPtr& expr) {
  if (auto var = As<Var>(expr)) return VisitVar(var);
  if (auto call = As<Call>(expr)) return VisitCall(call);
  if (auto tuple = As<TupleLiteral>(expr)) return VisitTupleLiteral(tuple);
  if (auto binary = As<BinaryExpr>(expr)) return VisitBinary(binary);
}

void IRVisitor::VisitStmt(const StmtPtr& stmt) {
  if (auto s = As<AssignStmt>(stmt)) return VisitAssign(s);
  if (auto s = As<EvalStmt>(stmt)) return VisitEval(s);
  if (auto s = As<SeqStmts>(stmt)) return VisitSeq(s);
  if (auto s = As<ReturnStmt>(stmt)) return VisitReturn(s);
  if (auto s = As<InCoreScopeStmt>(stmt)) return VisitInCoreScope(s);
  if (auto s = As<RuntimeScopeStmt>(stmt)) return VisitRuntimeScope(s);
  if (auto s = As<ForStmt>(stmt)) return VisitFor(s);
  if (auto s = As<WhileStmt>(stmt)) return VisitWhile(s);
  if (auto s = As<IfStmt>(stmt)) return VisitIf(s);
  if (auto s = As<YieldStmt>(stmt)) return VisitYield(s);
  if (AsJump(*stmt)) return VisitJump(std::static_pointer_cast<const JumpStmt>(stmt));
}

void IRVisitor::VisitCall(const std::shared_ptr<const Call>& call) {
  for (const auto& arg : call->args()) VisitExpr(arg);
  for (const auto& dep : call->order().deps) VisitExpr(dep);
  if (call->core_num()) VisitExpr(call->core_num());
}

void IRVisitor::VisitTupleLiteral(const std::shared_ptr<const TupleLiteral>& tuple) {
  for (const auto& element : tuple->elements()) VisitExpr(element);
}

void IRVisitor::VisitBinary(const std::shared_ptr<const BinaryExpr>& binary) {
  VisitExpr(binary->lhs());
  VisitExpr(binary->rhs());
}

void IRVisitor::VisitFor(const std::shared_ptr<const ForStmt>& stmt) {
  VisitExpr(stmt->start());
  VisitExpr(stmt->stop());
  VisitExpr(stmt->step());
  for (const auto& iter_arg : stmt->iter_args()) VisitExpr(iter_arg.init);
  VisitStmt(stmt->body());
}

void IRVisitor::VisitWhile(const std::shared_ptr<const WhileStmt>& stmt) {
  for (const auto& iter_arg : stmt->iter_args()) VisitExpr(iter_arg.init);
  VisitExpr(stmt->condition());
  VisitStmt(stmt->body());
}

void IRVisitor::VisitIf(const std::shared_ptr<const IfStmt>& stmt) {
  VisitExpr(stmt->condition());
  VisitStmt(stmt->then_body());
  if (stmt->else_body()) VisitStmt(stmt->else_body());
}

void IRVisitor::VisitYield(const std::shared_ptr<const YieldStmt>& stmt) {
  for (const auto& value : stmt->values()) VisitExpr(value);
}

void IRVisitor::VisitJump(const std::shared_ptr<const JumpStmt>& stmt) {
  for (const auto& value : stmt->values()) VisitExpr(value);
}

void IRVisitor::VisitAssign(const std::shared_ptr<const AssignStmt>& stmt) { VisitExpr(stmt->value()); }
void IRVisitor::VisitEval(const std::shared_ptr<const EvalStmt>& stmt) { VisitExpr(stmt->expr()); }
void IRVisitor::VisitSeq(const std::shared_ptr<const SeqStmts>& stmt) {
  for (const auto& child : stmt->stmts()) VisitStmt(child);
}
void IRVisitor::VisitReturn(const std::shared_ptr<const ReturnStmt>& stmt) {
  for (const auto& value : stmt->values()) VisitExpr(value);
}
void IRVisitor::VisitInCoreScope(const std::shared_ptr<const InCoreScopeStmt>& stmt) {
  for (const auto& dep : stmt->order().deps) VisitExpr(dep);
  if (stmt->block_num()) VisitExpr(stmt->block_num());
  VisitStmt(stmt->body());
}
void IRVisitor::VisitRuntimeScope(const std::shared_ptr<const RuntimeScopeStmt>& stmt) { VisitStmt(stmt->body()); }

ExprPtr IRMutator::MutateExpr(const ExprPtr& expr) {
  if (auto var = As<Var>(expr)) return MutateVar(var);
  if (auto call = As<Call>(expr)) return MutateCall(call);
  if (auto tuple = As<TupleLiteral>(expr)) return MutateTupleLiteral(tuple);
  if (auto binary = As<BinaryExpr>(expr)) return MutateBinary(binary);
  return expr;
}

StmtPtr IRMutator::MutateStmt(const StmtPtr& stmt) {
  if (auto s = As<AssignStmt>(stmt)) return MutateAssign(s);
  if (auto s = As<EvalStmt>(stmt)) return MutateEval(s);
  if (auto s = As<SeqStmts>(stmt)) return MutateSeq(s);
  if (auto s = As<ReturnStmt>(stmt)) return MutateReturn(s);
  if (auto s = As<InCoreScopeStmt>(stmt)) return MutateInCoreScope(s);
  if (auto s = As<RuntimeScopeStmt>(stmt)) return MutateRuntimeScope(s);
  if (auto s = As<ForStmt>(stmt)) return MutateFor(s);
  if (auto s = As<WhileStmt>(stmt)) return MutateWhile(s);
  if (auto s = As<IfStmt>(stmt)) return MutateIf(s);
  if (auto s = As<YieldStmt>(stmt)) return MutateYield(s);
  if (AsJump(*stmt)) return MutateJump(std::static_pointer_cast<const JumpStmt>(stmt));
  return stmt;
}

namespace {
// Mutates every element; reports whether any changed.
template <typename T, typename F>
bool MutateAll(const std::vector<T>& in, std::vector<T>& out, F&& mutate) {
  bool changed = false;
  out.reserve(in.size());
  for (const auto& item : in) {
    out.push_back(mutate(item));
    changed |= out.back() != item;
  }
  return changed;
}
}  // namespace

ExprPtr IRMutator::MutateCall(const std::shared_ptr<const Call>& call) {
  std::vector<ExprPtr> args;
  bool changed = MutateAll(call->args(), args, [&](const ExprPtr& e) { return MutateExpr(e); });
  if (call->is_op_call()) {
    if (!changed) return call;
    return std::make_shared<Call>(call->op(), std::move(args), call->kwargs(), call->type(), call->span());
  }
  auto order = MutateLaunchOrder(call->order(), changed);
  auto core_num = MutateOptional(call->core_num(), changed);
  if (!changed) return call;
  return std::make_shared<Call>(call->callee(), std::move(args), call->type(), call->span(), call->arg_directions(),
                                call->kwargs(), std::move(order), std::move(core_num));
}

ExprPtr IRMutator::MutateTupleLiteral(const std::shared_ptr<const TupleLiteral>& tuple) {
  std::vector<ExprPtr> elements;
  if (!MutateAll(tuple->elements(), elements, [&](const ExprPtr& e) { return MutateExpr(e); })) return tuple;
  return std::make_shared<TupleLiteral>(std::move(elements), tuple->span());
}

ExprPtr IRMutator::MutateBinary(const std::shared_ptr<const BinaryExpr>& binary) {
  auto lhs = MutateExpr(binary->lhs()), rhs = MutateExpr(binary->rhs());
  if (lhs == binary->lhs() && rhs == binary->rhs()) return binary;
  return std::make_shared<BinaryExpr>(binary->op(), lhs, rhs, binary->type(), binary->span());
}

StmtPtr IRMutator::MutateFor(const std::shared_ptr<const ForStmt>& stmt) {
  auto loop_var = As<Var>(MutateVar(stmt->loop_var()));
  auto start = MutateExpr(stmt->start()), stop = MutateExpr(stmt->stop()), step = MutateExpr(stmt->step());
  bool changed = loop_var != stmt->loop_var() || start != stmt->start() || stop != stmt->stop() ||
                 step != stmt->step();
  std::vector<IterArg> iter_args;
  for (const auto& iter_arg : stmt->iter_args()) {
    iter_args.push_back(IterArg{As<Var>(MutateVar(iter_arg.var)), MutateExpr(iter_arg.init), iter_arg.carry});
    changed |= iter_args.back().var != iter_arg.var || iter_args.back().init != iter_arg.init;
  }
  auto body = MutateStmt(stmt->body());
  std::vector<VarPtr> return_vars;
  changed |= MutateAll(stmt->return_vars(), return_vars, [&](const VarPtr& v) { return As<Var>(MutateVar(v)); });
  if (!changed && body == stmt->body()) return stmt;
  return std::make_shared<ForStmt>(loop_var, start, stop, step, std::move(iter_args), body, std::move(return_vars),
                                   stmt->kind(), stmt->span());
}

StmtPtr IRMutator::MutateWhile(const std::shared_ptr<const WhileStmt>& stmt) {
  bool changed = false;
  std::vector<IterArg> iter_args;
  for (const auto& iter_arg : stmt->iter_args()) {
    iter_args.push_back(IterArg{As<Var>(MutateVar(iter_arg.var)), MutateExpr(iter_arg.init), iter_arg.carry});
    changed |= iter_args.back().var != iter_arg.var || iter_args.back().init != iter_arg.init;
  }
  auto condition = MutateExpr(stmt->condition());
  auto body = MutateStmt(stmt->body());
  std::vector<VarPtr> return_vars;
  changed |= MutateAll(stmt->return_vars(), return_vars, [&](const VarPtr& v) { return As<Var>(MutateVar(v)); });
  if (!changed && condition == stmt->condition() && body == stmt->body()) return stmt;
  return std::make_shared<WhileStmt>(condition, std::move(iter_args), body, std::move(return_vars), stmt->span());
}

StmtPtr IRMutator::MutateIf(const std::shared_ptr<const IfStmt>& stmt) {
  auto condition = MutateExpr(stmt->condition());
  auto then_body = MutateStmt(stmt->then_body());
  auto else_body = stmt->else_body() ? MutateStmt(stmt->else_body()) : nullptr;
  std::vector<VarPtr> return_vars;
  bool changed = MutateAll(stmt->return_vars(), return_vars, [&](const VarPtr& v) { return As<Var>(MutateVar(v)); });
  if (!changed && condition == stmt->condition() && then_body == stmt->then_body() && else_body == stmt->else_body())
    return stmt;
  return std::make_shared<IfStmt>(condition, then_body, else_body, std::move(return_vars), stmt->span());
}

StmtPtr IRMutator::MutateYield(const std::shared_ptr<const YieldStmt>& stmt) {
  std::vector<ExprPtr> values;
  if (!MutateAll(stmt->values(), values, [&](const ExprPtr& e) { return MutateExpr(e); })) return stmt;
  return std::make_shared<YieldStmt>(std::move(values), stmt->span());
}

StmtPtr IRMutator::MutateJump(const std::shared_ptr<const JumpStmt>& stmt) {
  std::vector<ExprPtr> values;
  if (!MutateAll(stmt->values(), values, [&](const ExprPtr& e) { return MutateExpr(e); })) return stmt;
  if (stmt->Is<BreakStmt>()) return std::make_shared<BreakStmt>(std::move(values), stmt->span());
  return std::make_shared<ContinueStmt>(std::move(values), stmt->span());
}

StmtPtr IRMutator::MutateAssign(const std::shared_ptr<const AssignStmt>& stmt) {
  auto var = MutateVar(stmt->var());
  auto value = MutateExpr(stmt->value());
  if (var == stmt->var() && value == stmt->value()) return stmt;
  return std::make_shared<AssignStmt>(As<Var>(var), value, stmt->span());
}

StmtPtr IRMutator::MutateEval(const std::shared_ptr<const EvalStmt>& stmt) {
  auto expr = MutateExpr(stmt->expr());
  return expr == stmt->expr() ? stmt : std::make_shared<EvalStmt>(expr, stmt->span());
}

StmtPtr IRMutator::MutateSeq(const std::shared_ptr<const SeqStmts>& stmt) {
  std::vector<StmtPtr> stmts;
  if (!MutateAll(stmt->stmts(), stmts, [&](const StmtPtr& s) { return MutateStmt(s); })) return stmt;
  return std::make_shared<SeqStmts>(std::move(stmts), stmt->span());
}

StmtPtr IRMutator::MutateReturn(const std::shared_ptr<const ReturnStmt>& stmt) {
  std::vector<ExprPtr> values;
  if (!MutateAll(stmt->values(), values, [&](const ExprPtr& e) { return MutateExpr(e); })) return stmt;
  return std::make_shared<ReturnStmt>(std::move(values), stmt->span());
}

ExprPtr IRMutator::MutateOptional(const ExprPtr& expr, bool& changed) {
  if (!expr) return expr;
  auto mutated = MutateExpr(expr);
  changed |= mutated != expr;
  return mutated;
}

LaunchOrder IRMutator::MutateLaunchOrder(const LaunchOrder& order, bool& changed) {
  LaunchOrder result{.allow_early_resolve = order.allow_early_resolve};
  changed |= MutateAll(order.deps, result.deps, [&](const ExprPtr& e) { return MutateExpr(e); });
  if (order.task_id) {
    result.task_id = As<Var>(MutateVar(order.task_id));
    changed |= result.task_id != order.task_id;
  }
  return result;
}

StmtPtr IRMutator::MutateRuntimeScope(const std::shared_ptr<const RuntimeScopeStmt>& stmt) {
  auto body = MutateStmt(stmt->body());
  if (body == stmt->body()) return stmt;
  return std::make_shared<RuntimeScopeStmt>(stmt->manual(), body, stmt->span());
}

StmtPtr IRMutator::MutateInCoreScope(const std::shared_ptr<const InCoreScopeStmt>& stmt) {
  bool changed = false;
  auto order = MutateLaunchOrder(stmt->order(), changed);
  auto block_num = MutateOptional(stmt->block_num(), changed);
  auto body = MutateStmt(stmt->body());
  if (!changed && body == stmt->body()) return stmt;
  return std::make_shared<InCoreScopeStmt>(stmt->name_hint(), body, stmt->span(), std::move(block_num),
                                           stmt->sync_start(), std::move(order));
}

namespace {
class VarSubstituter final : public IRMutator {
 public:
  explicit VarSubstituter(const std::unordered_map<const Var*, VarPtr>& map) : map_(map) {}

 protected:
  ExprPtr MutateVar(const std::shared_ptr<const Var>& var) override {
    if (auto it = map_.find(var.get()); it != map_.end()) return it->second;
    if (auto it = retyped_.find(var.get()); it != retyped_.end()) return it->second;
    return Retyped(var);
  }

  // An op call's result type names the same variables as the variable it is assigned to.
  ExprPtr MutateCall(const std::shared_ptr<const Call>& call) override {
    auto mutated = IRMutator::MutateCall(call);
    const auto& result = static_cast<const Call&>(*mutated);
    auto type = RetypedTile(result.type());
    if (!type || !result.is_op_call()) return mutated;
    return std::make_shared<Call>(result.op(), result.args(), result.kwargs(), type, result.span());
  }

 private:
  // The tile type with its valid shape's variables substituted; null when nothing changes.
  TypePtr RetypedTile(const TypePtr& type) {
    return RewriteValidShape(type, [this](const ExprPtr& extent) { return MutateExpr(extent); });
  }

  // A tile whose valid shape names a substituted variable becomes a new variable whose type names
  // the replacement (outlining turns a scope's `vlen` into the kernel's parameter `vlen`).
  ExprPtr Retyped(const VarPtr& var) {
    auto type = RetypedTile(var->type());
    if (!type) return var;
    auto renamed = std::make_shared<Var>(var->name_hint(), type, var->span());
    retyped_[var.get()] = renamed;
    return renamed;
  }

  const std::unordered_map<const Var*, VarPtr>& map_;
  std::unordered_map<const Var*, VarPtr> retyped_;
};
}  // namespace

TypePtr RewriteValidShape(const TypePtr& type, const std::function<ExprPtr(const ExprPtr&)>& rewrite) {
  const auto* tile = type->As<TileType>();
  if (!tile || !tile->has_partial_valid_shape()) return nullptr;
  ValidShape valid;
  bool changed = false;
  for (const auto& extent : tile->valid_shape()) {
    valid.push_back(rewrite(extent));
    changed |= valid.back() != extent;
  }
  return changed ? WithValidShape(*tile, std::move(valid)) : nullptr;
}

StmtPtr SubstituteVars(const StmtPtr& stmt, const std::unordered_map<const Var*, VarPtr>& map) {
  return VarSubstituter(map).MutateStmt(stmt);
}

std::vector<StmtPtr> FlattenStmts(const StmtPtr& stmt) {
  if (const auto* seq = stmt->As<SeqStmts>()) return seq->stmts();
  return {stmt};
}

}  // namespace pypto::ir
