// UnrollLoops: `for i in pl.unroll(start, stop, step)` becomes one copy of its body per iteration,
// with `i` replaced by that iteration's constant. Scalar arithmetic on the constant folds, so tile
// offsets and valid shapes that depend on `i` become literals: the point of pl.unroll, and what
// backend-ptoas needs (it lowers no unroll loop). Each copy defines variables of its own; a loop's
// carried values become the previous copy's yielded values, and the loop's results the last
// copy's (the initial values when the loop runs no iteration). A variable the body defines and code
// after the loop reads takes the last copy's definition, as in Python. Loops nested in the body are
// unrolled first, so the copies hold no pl.unroll loop either.
#include <fmt/format.h>

#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "pypto/ir/valid_shape_rewrite.h"
#include "pypto/passes/passes.h"
#include "mutate_body.h"
#include "splicing_mutator.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

using ExprMap = std::unordered_map<const Var*, ExprPtr>;

// The variables a body defines: assignment targets, the loop variables, carried values and results
// of its loops, the results of its ifs, and the TaskIds its launches name.
class DefinedVars final : public IRVisitor {
 public:
  std::unordered_set<const Var*> vars;

 protected:
  void VisitAssign(const std::shared_ptr<const AssignStmt>& stmt) override {
    vars.insert(stmt->var().get());
    IRVisitor::VisitAssign(stmt);
  }
  void VisitFor(const std::shared_ptr<const ForStmt>& stmt) override {
    vars.insert(stmt->loop_var().get());
    AddLoop(*AsLoop(*stmt));
    IRVisitor::VisitFor(stmt);
  }
  void VisitWhile(const std::shared_ptr<const WhileStmt>& stmt) override {
    AddLoop(*AsLoop(*stmt));
    IRVisitor::VisitWhile(stmt);
  }
  void VisitIf(const std::shared_ptr<const IfStmt>& stmt) override {
    for (const auto& var : stmt->return_vars()) vars.insert(var.get());
    IRVisitor::VisitIf(stmt);
  }
  void VisitInCoreScope(const std::shared_ptr<const InCoreScopeStmt>& stmt) override {
    if (stmt->order().task_id) vars.insert(stmt->order().task_id.get());
    IRVisitor::VisitInCoreScope(stmt);
  }
  void VisitCall(const std::shared_ptr<const Call>& call) override {
    if (call->order().task_id) vars.insert(call->order().task_id.get());
    IRVisitor::VisitCall(call);
  }

 private:
  void AddLoop(const LoopView& loop) {
    for (const auto& iter_arg : loop.iter_args) vars.insert(iter_arg.var.get());
    for (const auto& var : loop.return_vars) vars.insert(var.get());
  }
};

// Replaces variables by expressions, folding the scalar arithmetic that becomes constant and
// carrying the replacement into the valid shapes of tile types. A variable of `fresh` is replaced by
// a new variable of the same name (one per Substituter), so that each copy of a body defines its own.
// A statement rewritten into several (an unrolled loop) joins the sequence around it.
class Substituter : public SplicingMutator {
 public:
  explicit Substituter(ExprMap map = {}, std::unordered_set<const Var*> fresh = {})
      : map_(std::move(map)), fresh_(std::move(fresh)) {}

  void Bind(const Var* var, ExprPtr value) { map_[var] = std::move(value); }
  const ExprMap& map() const { return map_; }

 protected:
  ExprPtr MutateVar(const std::shared_ptr<const Var>& var) override {
    if (auto it = map_.find(var.get()); it != map_.end()) return it->second;
    auto type = Retyped(var->type());
    if (!fresh_.contains(var.get()) && !type) return var;
    auto copy = std::make_shared<Var>(var->name_hint(), type ? type : var->type(), var->span());
    map_[var.get()] = copy;
    return copy;
  }

  ExprPtr MutateCall(const std::shared_ptr<const Call>& call) override {
    auto mutated = IRMutator::MutateCall(call);
    const auto& result = static_cast<const Call&>(*mutated);
    auto type = Retyped(result.type());
    if (!type || !result.is_op_call()) return mutated;
    return std::make_shared<Call>(result.op(), result.args(), result.kwargs(), type, result.span());
  }

  // `k * 64` with k now 1 becomes 64, and `r + k` with k now 0 becomes r; an expression that does not
  // fold keeps its form.
  ExprPtr MutateBinary(const std::shared_ptr<const BinaryExpr>& binary) override {
    auto lhs = MutateExpr(binary->lhs()), rhs = MutateExpr(binary->rhs());
    if (lhs == binary->lhs() && rhs == binary->rhs()) return binary;
    if (lhs->Is<ConstInt>() && rhs->Is<ConstInt>()) {
      if (auto folded = MakeBinary(binary->op(), lhs, rhs, binary->span()); folded && (*folded)->Is<ConstInt>())
        return *folded;
    }
    if (auto same = Identity(binary->op(), lhs, rhs); same && same->type()->equals(*binary->type())) return same;
    return std::make_shared<BinaryExpr>(binary->op(), lhs, rhs, binary->type(), binary->span());
  }

 private:
  // The operand `x + 0`, `0 + x`, `x - 0`, `x * 1` or `1 * x` equals; null for any other expression.
  static ExprPtr Identity(BinaryOp op, const ExprPtr& lhs, const ExprPtr& rhs) {
    auto l = AsConstInt(lhs), r = AsConstInt(rhs);
    if ((op == BinaryOp::Add || op == BinaryOp::Sub) && r == 0) return lhs;
    if (op == BinaryOp::Add && l == 0) return rhs;
    if (op == BinaryOp::Mul && r == 1) return lhs;
    if (op == BinaryOp::Mul && l == 1) return rhs;
    return nullptr;
  }

  // The tile type with the replacements made in its valid shape; null when nothing changes.
  TypePtr Retyped(const TypePtr& type) {
    return RewriteValidShape(type, [this](const ExprPtr& extent) { return MutateExpr(extent); });
  }

  ExprMap map_;
  std::unordered_set<const Var*> fresh_;
};

// Walks a function, unrolling every pl.unroll loop innermost first. What a loop defines for the code
// after it (its results, the last copy's variables) is substituted in that code as the walk reaches it.
class LoopUnroller final : public Substituter {
 public:
  const std::optional<Diagnostic>& error() const { return error_; }

 protected:
  StmtPtr MutateFor(const std::shared_ptr<const ForStmt>& stmt) override {
    auto mutated = IRMutator::MutateFor(stmt);
    const auto& loop = static_cast<const ForStmt&>(*mutated);
    if (loop.kind() != ForKind::Unroll || error_) return mutated;
    auto trips = ConstantTrips(loop);
    if (!trips) return mutated;
    std::vector<StmtPtr> copies;
    std::vector<ExprPtr> carried;
    for (const auto& iter_arg : loop.iter_args()) carried.push_back(iter_arg.init);
    DefinedVars defined;
    defined.VisitStmt(loop.body());
    for (int64_t value : *trips) {
      Substituter copier({}, defined.vars);
      copier.Bind(loop.loop_var().get(), std::make_shared<ConstInt>(value, DataType::INDEX, loop.span()));
      for (size_t i = 0; i < carried.size(); ++i) copier.Bind(loop.iter_args()[i].var.get(), carried[i]);
      for (auto& copy : FlattenStmts(copier.MutateStmt(loop.body()))) {
        if (const auto* yield = copy->As<YieldStmt>()) carried = yield->values();
        else copies.push_back(std::move(copy));
      }
      if (value == trips->back())
        for (const auto* var : defined.vars)
          if (auto it = copier.map().find(var); it != copier.map().end()) Bind(var, it->second);
    }
    for (size_t i = 0; i < loop.return_vars().size(); ++i) Bind(loop.return_vars()[i].get(), carried[i]);
    return std::make_shared<SeqStmts>(std::move(copies), loop.span());
  }

 private:
  // The loop variable's values; an error (kept for the pass to report) when a bound is not constant.
  std::optional<std::vector<int64_t>> ConstantTrips(const ForStmt& loop) {
    auto start = AsConstInt(loop.start()), stop = AsConstInt(loop.stop()), step = AsConstInt(loop.step());
    if (!start || !stop || !step) {
      error_ = Diagnostic{DiagnosticKind::InvalidOperation,
                          fmt::format("pl.unroll needs constant bounds: the loop over '{}' is copied once per "
                                      "iteration at compile time",
                                      loop.loop_var()->name_hint()),
                          loop.span(), "use pl.range for a loop whose trip count is known only at run time"};
      return std::nullopt;
    }
    const int64_t trips = *step > 0 ? (*stop > *start ? (*stop - *start + *step - 1) / *step : 0)
                                    : (*start > *stop ? (*start - *stop - *step - 1) / -*step : 0);
    if (trips > kMaxUnrollTrips) {
      error_ = Diagnostic{DiagnosticKind::InvalidOperation,
                          fmt::format("pl.unroll over '{}' runs {} times, more than the {} copies a loop may be "
                                      "unrolled into",
                                      loop.loop_var()->name_hint(), trips, kMaxUnrollTrips),
                          loop.span(), "use pl.range for a long loop, and unroll a short inner one"};
      return std::nullopt;
    }
    std::vector<int64_t> values;
    for (int64_t v = *start; *step > 0 ? v < *stop : v > *stop; v += *step) values.push_back(v);
    return values;
  }

  // Upstream's limit: each copy is code in the kernel, and a long unrolled loop is a mistake for pl.range.
  static constexpr int64_t kMaxUnrollTrips = 1024;

  std::optional<Diagnostic> error_;
};

}  // namespace

Pass UnrollLoops() {
  return Pass("UnrollLoops", {}, {IRProperty::NoUnrollLoops}, {},
              [](const ProgramPtr& program, const PassContext&) -> Result<ProgramPtr> {
                return RewriteEachFunction(program, [](const FunctionPtr& function) -> Result<FunctionPtr> {
                  LoopUnroller unroller;
                  return MutateBody(function, unroller);
                });
              });
}

}  // namespace pypto::passes
