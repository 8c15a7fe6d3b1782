// FlattenCallExpr: three-address form. A call nested in another call's arguments, or in scalar
// arithmetic (`r = 32 + pl.tile.get_block_idx() * 16`), is hoisted into its own assignment to a
// temporary (`__tmp_vN`), so every intermediate tile has a variable that memory allocation can place
// and code generators can name, and scalar expressions are arithmetic over variables only.
#include <fmt/format.h>

#include "pypto/ir/functor.h"
#include "pypto/passes/passes.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

class CallFlattener {
 public:
  StmtPtr Flatten(const StmtPtr& stmt) {
    if (const auto* seq = stmt->As<SeqStmts>()) {
      std::vector<StmtPtr> out;
      for (const auto& child : seq->stmts()) FlattenInto(child, out);
      return std::make_shared<SeqStmts>(std::move(out), seq->span());
    }
    std::vector<StmtPtr> out;
    FlattenInto(stmt, out);
    return out.size() == 1 ? out[0] : std::make_shared<SeqStmts>(std::move(out), stmt->span());
  }

 private:
  void FlattenInto(const StmtPtr& stmt, std::vector<StmtPtr>& out) {
    if (const auto* scope = stmt->As<InCoreScopeStmt>()) {
      out.push_back(std::make_shared<InCoreScopeStmt>(scope->name_hint(), Flatten(scope->body()), scope->span(),
                                                      scope->block_num(), scope->sync_start(),
                                                      HoistDeps(scope->order(), out)));
    } else if (const auto* runtime = stmt->As<RuntimeScopeStmt>()) {
      out.push_back(std::make_shared<RuntimeScopeStmt>(runtime->manual(), Flatten(runtime->body()), runtime->span()));
    } else if (const auto* assign = stmt->As<AssignStmt>()) {
      out.push_back(std::make_shared<AssignStmt>(assign->var(), FlattenOperands(assign->value(), out), stmt->span()));
    } else if (const auto* eval = stmt->As<EvalStmt>()) {
      out.push_back(std::make_shared<EvalStmt>(FlattenOperands(eval->expr(), out), stmt->span()));
    } else if (const auto* ret = stmt->As<ReturnStmt>()) {
      std::vector<ExprPtr> values;
      for (const auto& value : ret->values()) values.push_back(Hoist(value, out));
      out.push_back(std::make_shared<ReturnStmt>(std::move(values), stmt->span()));
    } else if (const auto* loop = stmt->As<ForStmt>()) {
      std::vector<IterArg> iter_args;
      for (const auto& iter_arg : loop->iter_args()) iter_args.push_back(IterArg{iter_arg.var, Hoist(iter_arg.init, out)});
      out.push_back(std::make_shared<ForStmt>(loop->loop_var(), loop->start(), loop->stop(), loop->step(),
                                              std::move(iter_args), Flatten(loop->body()), loop->return_vars(),
                                              loop->kind(), loop->span()));
    } else if (const auto* loop = stmt->As<WhileStmt>()) {
      // The condition is evaluated before every iteration, so its calls stay in it.
      std::vector<IterArg> iter_args;
      for (const auto& iter_arg : loop->iter_args())
        iter_args.push_back(IterArg{iter_arg.var, Hoist(iter_arg.init, out)});
      out.push_back(std::make_shared<WhileStmt>(loop->condition(), std::move(iter_args), Flatten(loop->body()),
                                                loop->return_vars(), loop->span()));
    } else if (const auto* branch = stmt->As<IfStmt>()) {
      out.push_back(std::make_shared<IfStmt>(branch->condition(), Flatten(branch->then_body()),
                                             branch->else_body() ? Flatten(branch->else_body()) : nullptr,
                                             branch->return_vars(), branch->span()));
    } else if (const auto* yield = stmt->As<YieldStmt>()) {
      std::vector<ExprPtr> values;
      for (const auto& value : yield->values()) values.push_back(Hoist(value, out));
      out.push_back(std::make_shared<YieldStmt>(std::move(values), stmt->span()));
    } else if (const auto* seq = stmt->As<SeqStmts>()) {
      for (const auto& child : seq->stmts()) FlattenInto(child, out);
    } else {
      out.push_back(stmt);
    }
  }

  // The call itself stays; calls among its operands are hoisted before it. Any other value keeps its
  // shape with the calls inside it hoisted.
  ExprPtr FlattenOperands(const ExprPtr& expr, std::vector<StmtPtr>& out) {
    auto call = As<Call>(expr);
    if (!call) return Hoist(expr, out);
    std::vector<ExprPtr> args;
    bool changed = false;
    for (const auto& arg : call->args()) {
      args.push_back(Hoist(arg, out));
      changed |= args.back() != arg;
    }
    if (call->is_op_call()) {
      if (!changed) return expr;
      return std::make_shared<Call>(call->op(), std::move(args), call->kwargs(), call->type(), call->span());
    }
    LaunchOrder order = HoistDeps(call->order(), out);
    if (!changed && order.deps == call->order().deps) return expr;
    return std::make_shared<Call>(call->callee(), std::move(args), call->type(), call->span(), call->arg_directions(),
                                  call->kwargs(), std::move(order), call->core_num());
  }

  // `deps=[tids[0], tids[2]]`: each element read becomes a TaskId variable of its own.
  LaunchOrder HoistDeps(LaunchOrder order, std::vector<StmtPtr>& out) {
    for (auto& dep : order.deps) dep = Hoist(dep, out);
    return order;
  }

  // A nested call becomes `__tmp_vN = call` and is replaced by the temporary; arithmetic and lists
  // around calls are rebuilt around their temporaries.
  ExprPtr Hoist(const ExprPtr& expr, std::vector<StmtPtr>& out) {
    if (auto binary = As<BinaryExpr>(expr)) {
      auto lhs = Hoist(binary->lhs(), out), rhs = Hoist(binary->rhs(), out);
      if (lhs == binary->lhs() && rhs == binary->rhs()) return expr;
      return std::make_shared<BinaryExpr>(binary->op(), lhs, rhs, binary->type(), binary->span());
    }
    if (auto tuple = As<TupleLiteral>(expr)) {
      std::vector<ExprPtr> elements;
      bool changed = false;
      for (const auto& element : tuple->elements()) {
        elements.push_back(Hoist(element, out));
        changed |= elements.back() != element;
      }
      return changed ? std::make_shared<TupleLiteral>(std::move(elements), tuple->span()) : expr;
    }
    if (!expr->Is<Call>()) return expr;
    auto value = FlattenOperands(expr, out);
    auto temp = std::make_shared<Var>(fmt::format("__tmp_v{}", next_temp_++), value->type(), value->span());
    out.push_back(std::make_shared<AssignStmt>(temp, value, value->span()));
    return temp;
  }

  int next_temp_ = 0;
};

}  // namespace

Pass FlattenCallExpr() {
  return Pass("FlattenCallExpr", {}, {IRProperty::NoNestedCalls}, {},
              [](const ProgramPtr& program, const PassContext&) -> Result<ProgramPtr> {
                return RewriteEachFunction(program, [](const FunctionPtr& function) -> Result<FunctionPtr> {
                  return function->WithBody(CallFlattener().Flatten(function->body()));
                });
              });
}

}  // namespace pypto::passes
