#include "pypto/ir/tensor_aliases.h"

#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"

namespace pypto::ir {
namespace {

// The values a body hands back at its end (a kernel loop's or a branch's trailing yield).
const std::vector<ExprPtr>* YieldedBy(const StmtPtr& body) {
  if (!body) return nullptr;
  auto stmts = FlattenStmts(body);
  const auto* yield = stmts.empty() ? nullptr : stmts.back()->As<YieldStmt>();
  return yield ? &yield->values() : nullptr;
}

}  // namespace

TensorAliases::TensorAliases(const StmtPtr& body) { Visit(body); }

const Var* TensorAliases::Root(const Var* var) const {
  auto it = root_.find(var);
  return it == root_.end() ? var : it->second;
}

const Var* TensorAliases::RootOf(const ExprPtr& expr) const {
  const auto* var = expr ? expr->As<Var>() : nullptr;
  return var ? Root(var) : nullptr;
}

// A kernel loop carrying a tensor it only updates in place hands back that same tensor.
void TensorAliases::VisitLoop(const LoopView& loop) {
  const auto& [iter_args, body, return_vars] = loop;
  for (const auto& iter_arg : iter_args)
    if (const auto* init = RootOf(iter_arg.init); init && iter_arg.var->type()->As<TensorType>())
      root_[iter_arg.var.get()] = init;
  Visit(body);
  const auto* yielded = YieldedBy(body);
  for (size_t i = 0; yielded && i < return_vars.size() && i < iter_args.size(); ++i) {
    const Var* carried = Root(iter_args[i].var.get());
    if (i < yielded->size() && RootOf((*yielded)[i]) == carried && carried != iter_args[i].var.get())
      root_[return_vars[i].get()] = carried;
  }
}

void TensorAliases::Visit(const StmtPtr& stmt) {
  if (!stmt) return;
  if (const auto* assign = stmt->As<AssignStmt>()) {
    // A store's value is the tensor it wrote.
    const auto* call = assign->value()->As<Call>();
    if (call && call->is_op_call() && call->op()->writes_arg && assign->var()->type()->As<TensorType>())
      if (const auto* dest = RootOf(call->args()[*call->op()->writes_arg])) root_[assign->var().get()] = dest;
    return;
  }
  if (auto loop = AsLoop(*stmt)) return VisitLoop(*loop);
  if (const auto* branch = stmt->As<IfStmt>()) {
    Visit(branch->then_body());
    Visit(branch->else_body());
    const auto *then_values = YieldedBy(branch->then_body()), *else_values = YieldedBy(branch->else_body());
    for (size_t i = 0; then_values && else_values && i < branch->return_vars().size(); ++i) {
      if (i >= then_values->size() || i >= else_values->size()) break;
      const Var* root = RootOf((*then_values)[i]);
      if (root && root == RootOf((*else_values)[i]) && branch->return_vars()[i]->type()->As<TensorType>())
        root_[branch->return_vars()[i].get()] = root;
    }
    return;
  }
  if (const auto* seq = stmt->As<SeqStmts>()) {
    for (const auto& inner : seq->stmts()) Visit(inner);
  } else if (const auto* scope = stmt->As<InCoreScopeStmt>()) {
    Visit(scope->body());
  } else if (const auto* runtime = stmt->As<RuntimeScopeStmt>()) {
    Visit(runtime->body());
  }
}

}  // namespace pypto::ir
