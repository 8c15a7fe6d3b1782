// ClassifyIterArgCarry: decides, for each value an orchestration loop carries, how the generated C++
// carries it, and stamps the decision on the loop's IterArg (property IterArgCarryClassified), so that
// codegen-orch reads it instead of deciding it while it emits.
//
// Scalars, TaskIds and TaskId arrays are C++ variables assigned where the body yields. A tensor is one
// of two things. Either every iteration yields the buffer it started with, updated in place by the
// kernels it is passed to (Alias): then the iter_arg, the yielded value and the loop's result all name
// the initial tensor, and the C++ must not copy it, since the runtime orders tasks by the tensors they
// are handed. Or the body yields another buffer (`current = next`, Rebind): then the C++ keeps a tensor
// variable that the yield reassigns, so the next iteration and the code after the loop see it.
//
// A yielded tensor is the carried buffer when it reaches the iter_arg through copies (`y = x`), stores
// into it (`tensor.assemble`), calls returning the parameter it was passed for (ReturnParamsExplicit
// makes a kernel return its output parameter itself), ifs whose branches both yield it, and inner loops
// carrying it as an Alias (loops are classified inside out).
#include <fmt/format.h>

#include <unordered_map>

#include "mutate_body.h"
#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"
#include "pypto/passes/passes.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

// The buffer each tensor variable of a loop body is: the variable it is an in-place update or a copy
// of, followed back to one the body did not define.
class BufferRoots {
 public:
  BufferRoots(const Program& program, const StmtPtr& body) : program_(program) { Visit(body); }

  const Var* Root(const Var* var) const {
    auto it = root_.find(var);
    return it == root_.end() ? var : it->second;
  }

 private:
  const Var* RootOf(const ExprPtr& expr) const {
    const auto* var = expr ? expr->As<Var>() : nullptr;
    return var ? Root(var) : nullptr;
  }

  void Alias(const Var* var, const Var* root) {
    if (root) root_[var] = root;
  }

  void Visit(const StmtPtr& stmt) {
    for (const auto& s : FlattenStmts(stmt)) {
      if (const auto* assign = s->As<AssignStmt>()) Assign(*assign);
      else if (const auto* scope = s->As<RuntimeScopeStmt>()) Visit(scope->body());
      else if (const auto* branch = s->As<IfStmt>()) Branch(*branch);
      else if (const auto* loop = s->As<ForStmt>()) Loop(*loop);
    }
  }

  void Assign(const AssignStmt& assign) {
    const Var* var = assign.var().get();
    if (assign.value()->Is<Var>()) return Alias(var, RootOf(assign.value()));
    const auto* call = assign.value()->As<Call>();
    if (!call) return;
    if (call->is_op_call()) {
      if (call->op()->name == "tensor.assemble" && !call->args().empty()) Alias(var, RootOf(call->args()[0]));
      return;
    }
    const FunctionPtr callee = program_.Find(call->callee());
    if (!callee) return;
    if (auto returned = ReturnedParam(*callee); returned && *returned < call->args().size())
      Alias(var, RootOf(call->args()[*returned]));
  }

  // An if's result is the buffer both branches yield, when they yield the same one.
  void Branch(const IfStmt& branch) {
    Visit(branch.then_body());
    if (branch.else_body()) Visit(branch.else_body());
    const YieldStmt* then_yield = TrailingYield(branch.then_body());
    const YieldStmt* else_yield = branch.else_body() ? TrailingYield(branch.else_body()) : nullptr;
    if (!then_yield || !else_yield) return;
    for (size_t i = 0; i < branch.return_vars().size(); ++i) {
      if (i >= then_yield->values().size() || i >= else_yield->values().size()) break;
      const Var* then_root = RootOf(then_yield->values()[i]);
      if (then_root && then_root == RootOf(else_yield->values()[i])) Alias(branch.return_vars()[i].get(), then_root);
    }
  }

  // An inner loop's result is its initial buffer when it carries that as an Alias.
  void Loop(const ForStmt& loop) {
    for (size_t i = 0; i < loop.return_vars().size() && i < loop.iter_args().size(); ++i)
      if (loop.iter_args()[i].carry == CarryKind::Alias)
        Alias(loop.return_vars()[i].get(), RootOf(loop.iter_args()[i].init));
  }

  const Program& program_;
  std::unordered_map<const Var*, const Var*> root_;
};

class CarryClassifier final : public IRMutator {
 public:
  explicit CarryClassifier(const Program& program) : program_(program) {}
  const std::optional<Diagnostic>& error() const { return error_; }

 protected:
  StmtPtr MutateFor(const std::shared_ptr<const ForStmt>& stmt) override {
    auto mutated = As<ForStmt>(IRMutator::MutateFor(stmt));  // inner loops first
    if (error_ || mutated->iter_args().empty()) return mutated;
    const YieldStmt* yield = TrailingYield(mutated->body());
    const BufferRoots roots(program_, mutated->body());
    std::vector<IterArg> iter_args = mutated->iter_args();
    for (size_t i = 0; i < iter_args.size(); ++i) {
      const ExprPtr next = yield && i < yield->values().size() ? yield->values()[i] : nullptr;
      auto kind = Classify(*mutated, iter_args[i], next, roots);
      if (!kind) {
        error_ = kind.error();
        return stmt;
      }
      iter_args[i].carry = *kind;
    }
    return std::make_shared<ForStmt>(mutated->loop_var(), mutated->start(), mutated->stop(), mutated->step(),
                                     std::move(iter_args), mutated->body(), mutated->return_vars(), mutated->kind(),
                                     mutated->span());
  }

 private:
  static Result<CarryKind> Classify(const ForStmt& loop, const IterArg& iter_arg, const ExprPtr& next,
                                    const BufferRoots& roots) {
    const Type& type = *iter_arg.var->type();
    if (IsTaskIdArray(type)) return CarryKind::TaskIdArray;
    if (IsTaskId(type)) return CarryKind::TaskId;
    if (type.As<ScalarType>()) return CarryKind::Scalar;
    if (type.As<TensorType>()) {
      const auto* value = next ? next->As<Var>() : nullptr;
      return value && roots.Root(value) == iter_arg.var.get() ? CarryKind::Alias : CarryKind::Rebind;
    }
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("orchestration loop '{}' carries '{}' ({}); orchestration loops carry scalars, "
                                 "TaskIds, TaskId arrays and tensors only",
                                 loop.loop_var()->name_hint(), iter_arg.var->name_hint(), type.str()),
                     loop.span());
  }

  const Program& program_;
  std::optional<Diagnostic> error_;
};

}  // namespace

Pass ClassifyIterArgCarry() {
  // NoInCoreScopes: the orchestration's loops are the ones left in it once kernels are outlined.
  // SSAForm: whether a yielded tensor is the carried buffer is read off its one definition.
  return Pass("ClassifyIterArgCarry",
              {IRProperty::SSAForm, IRProperty::NoInCoreScopes, IRProperty::ReturnParamsExplicit},
              {IRProperty::IterArgCarryClassified}, {},
              [](const ProgramPtr& program, const PassContext&) -> Result<ProgramPtr> {
                return RewriteEachFunction(program, [&](const FunctionPtr& function) -> Result<FunctionPtr> {
                  if (function->type() != FunctionType::Orchestration) return function;
                  CarryClassifier classifier(*program);
                  return MutateBody(function, classifier);
                });
              });
}

}  // namespace pypto::passes
