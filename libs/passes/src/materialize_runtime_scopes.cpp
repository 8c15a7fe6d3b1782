// MaterializeRuntimeScopes: the orchestration runs inside a runtime scope, and so does each
// iteration of its loops, so that the ring slots of an iteration's tasks come back when it ends.
// The pass makes those scopes statements of the IR (automatic RuntimeScopeStmts, printed
// `with pl.scope():`) around the orchestration body and around each loop body (its return or yield
// after the scope), so codegen-orch emits a PTO2_SCOPE exactly where the IR has one (property
// RuntimeScopesMaterialized). Inside a manual scope nothing is wrapped: a manual scope's tasks keep their slots until it ends, as
// upstream's runtime has it. A body that already is an automatic scope (written `with pl.scope():`,
// or wrapped by an earlier run) is kept as it is, so the pass is idempotent. A function declared
// auto_scope=False (`@pl.jit(auto_scope=False)`) is left as written: its author places every scope,
// and what no scope covers runs in the run's outer scope, whose slots come back when the run ends
// (upstream's MaterializeRuntimeScopes leaves such functions alone too).
#include "pypto/ir/functor.h"
#include "pypto/passes/passes.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

// The body's statements inside an automatic scope; its terminator (a loop's yield, the function's
// return) stays after the scope, as it is no runtime work and the frontend reads it only there.
StmtPtr WrapInAutoScope(const StmtPtr& body) {
  if (AsAutoRuntimeScope(body)) return body;
  auto stmts = FlattenStmts(body);
  StmtPtr terminator;
  if (!stmts.empty() && (stmts.back()->Is<YieldStmt>() || stmts.back()->Is<ReturnStmt>())) {
    terminator = stmts.back();
    stmts.pop_back();
  }
  StmtPtr scope = std::make_shared<RuntimeScopeStmt>(
      /*manual=*/false, stmts.size() == 1 ? stmts[0] : std::make_shared<SeqStmts>(std::move(stmts), body->span()),
      body->span());
  if (!terminator) return scope;
  return std::make_shared<SeqStmts>(std::vector<StmtPtr>{std::move(scope), std::move(terminator)}, body->span());
}

class ScopeMaterializer final : public IRMutator {
 protected:
  StmtPtr MutateFor(const std::shared_ptr<const ForStmt>& stmt) override {
    auto mutated = As<ForStmt>(IRMutator::MutateFor(stmt));
    if (manual_depth_ > 0) return mutated;
    auto body = WrapInAutoScope(mutated->body());
    if (body == mutated->body()) return mutated;
    return std::make_shared<ForStmt>(mutated->loop_var(), mutated->start(), mutated->stop(), mutated->step(),
                                     mutated->iter_args(), body, mutated->return_vars(), mutated->kind(),
                                     mutated->span());
  }

  StmtPtr MutateRuntimeScope(const std::shared_ptr<const RuntimeScopeStmt>& stmt) override {
    manual_depth_ += stmt->manual() ? 1 : 0;
    auto mutated = IRMutator::MutateRuntimeScope(stmt);
    manual_depth_ -= stmt->manual() ? 1 : 0;
    return mutated;
  }

 private:
  int manual_depth_ = 0;
};

}  // namespace

Pass MaterializeRuntimeScopes() {
  return Pass("MaterializeRuntimeScopes", {IRProperty::NoInCoreScopes, IRProperty::CallDirectionsDerived},
              {IRProperty::RuntimeScopesMaterialized}, {},
              [](const ProgramPtr& program, const PassContext&) -> Result<ProgramPtr> {
                return RewriteEachFunction(program, [](const FunctionPtr& function) -> Result<FunctionPtr> {
                  if (function->type() != FunctionType::Orchestration || !AutoScope(*function)) return function;
                  ScopeMaterializer materializer;
                  auto body = WrapInAutoScope(materializer.MutateStmt(function->body()));
                  return body == function->body() ? function : function->WithBody(body);
                });
              });
}

}  // namespace pypto::passes
