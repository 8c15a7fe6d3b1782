// CtrlFlowTransform: `break` and `continue` become structured control flow, which is all the
// simulator, backend-ptoas (scf) and the orchestration task plan can express.
//
// The IR is in SSA form with explicit carried values, so a jump is a path that ends early with the
// values it hands on (JumpStmt::values). The pass rewrites each loop body, innermost loop first, so
// that every path runs to the body's end:
//
//   A; if c: (B; continue(v)); C; yield(y)   ->  A; if c: (B; yield(v)) else: (C; yield(y)) -> r; yield(r)
//
// The statements after an if that holds a jump go into its branches that fall through (copied, each
// copy defining variables of its own, when both do), the if's own results replaced there by what the
// branch yielded; each rewritten if yields what the loop carries. A loop that breaks carries one
// more value, a flag set to 1 where it breaks, and runs its whole body under `if flag == 0:`: the
// remaining iterations do nothing. (Upstream turns such a for loop into a while loop; keeping the
// for loop keeps its trip count, which the orchestration task plan needs, and the body runs exactly
// the iterations it ran before this pass existed.)
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "pypto/passes/passes.h"
#include "mutate_body.h"
#include "splicing_mutator.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

// Whether `stmt` holds a jump of the loop being rewritten (a break, with `breaks_only`). Jumps in
// nested loops belong to those loops, which are rewritten first; scopes hold none (the frontend
// refuses a jump out of a pl.at scope).
bool HoldsJumpIf(const StmtPtr& stmt, bool breaks_only) {
  if (!stmt) return false;
  if (const auto* jump = AsJump(*stmt)) return !breaks_only || jump->Is<BreakStmt>();
  if (const auto* seq = stmt->As<SeqStmts>())
    return std::ranges::any_of(seq->stmts(), [&](const StmtPtr& s) { return HoldsJumpIf(s, breaks_only); });
  if (const auto* branch = stmt->As<IfStmt>())
    return HoldsJumpIf(branch->then_body(), breaks_only) || HoldsJumpIf(branch->else_body(), breaks_only);
  return false;
}
bool HoldsJump(const StmtPtr& stmt) { return HoldsJumpIf(stmt, false); }
bool HoldsBreak(const StmtPtr& stmt) { return HoldsJumpIf(stmt, true); }

// Maps each variable a statement defines to a fresh one of the same name and type.
class FreshDefinitions final : public IRVisitor {
 public:
  std::unordered_map<const Var*, VarPtr> map;

 protected:
  void VisitAssign(const std::shared_ptr<const AssignStmt>& stmt) override {
    Fresh(stmt->var());
    IRVisitor::VisitAssign(stmt);
  }
  void VisitFor(const std::shared_ptr<const ForStmt>& stmt) override {
    Fresh(stmt->loop_var());
    AddLoop(*AsLoop(*stmt));
    IRVisitor::VisitFor(stmt);
  }
  void VisitWhile(const std::shared_ptr<const WhileStmt>& stmt) override {
    AddLoop(*AsLoop(*stmt));
    IRVisitor::VisitWhile(stmt);
  }
  void VisitIf(const std::shared_ptr<const IfStmt>& stmt) override {
    for (const auto& var : stmt->return_vars()) Fresh(var);
    IRVisitor::VisitIf(stmt);
  }
  void VisitInCoreScope(const std::shared_ptr<const InCoreScopeStmt>& stmt) override {
    if (stmt->order().task_id) Fresh(stmt->order().task_id);
    IRVisitor::VisitInCoreScope(stmt);
  }
  void VisitCall(const std::shared_ptr<const Call>& call) override {
    if (call->order().task_id) Fresh(call->order().task_id);
    IRVisitor::VisitCall(call);
  }

 private:
  void AddLoop(const LoopView& loop) {
    for (const auto& iter_arg : loop.iter_args) Fresh(iter_arg.var);
    for (const auto& var : loop.return_vars) Fresh(var);
  }
  void Fresh(const VarPtr& var) {
    if (var && !map.contains(var.get()))
      map[var.get()] = std::make_shared<Var>(var->name_hint(), var->type(), var->span());
  }
};

// A copy of `stmts` that defines variables of its own, for a second path through the same code.
std::vector<StmtPtr> CopyWithFreshDefinitions(const std::vector<StmtPtr>& stmts) {
  FreshDefinitions fresh;
  for (const auto& stmt : stmts) fresh.VisitStmt(stmt);
  std::vector<StmtPtr> copy;
  for (const auto& stmt : stmts) copy.push_back(SubstituteVars(stmt, fresh.map));
  return copy;
}

// Rewrites the body of one loop so that no path through it jumps. Every path ends with a yield of
// what the loop carries on: its carried values and, when it breaks, the break flag.
class BodyRewriter {
 public:
  // `carried`: the loop's carried values (their types name the results of the rewritten ifs).
  // `flag`: the break flag the body reads (0 while it runs), or null when the loop does not break.
  BodyRewriter(const std::vector<IterArg>& carried, VarPtr flag) : carried_(carried), flag_(std::move(flag)) {}

  // `stmts` run to the body's end, where the loop's own yield (if any) hands on its carried values.
  std::vector<StmtPtr> Rewrite(const std::vector<StmtPtr>& stmts) {
    std::vector<StmtPtr> out;
    for (size_t i = 0; i < stmts.size(); ++i) {
      const StmtPtr& stmt = stmts[i];
      if (const auto* jump = AsJump(*stmt))
        return Exit(std::move(out), jump->values(), jump->Is<BreakStmt>(), stmt->span());
      // Branch yields are taken apart in Branch(), so a yield met here is the loop's.
      if (const auto* yield = stmt->As<YieldStmt>()) return Exit(std::move(out), yield->values(), false, stmt->span());
      const auto* branch = stmt->As<IfStmt>();
      if (!branch || !HoldsJump(stmt)) {
        out.push_back(stmt);
        continue;
      }
      const std::vector<StmtPtr> rest(stmts.begin() + static_cast<std::ptrdiff_t>(i) + 1, stmts.end());
      const bool both_fall_through = !EndsInJump(branch->then_body()) && !EndsInJump(branch->else_body());
      auto then_body = Branch(branch->then_body(), branch->return_vars(), rest);
      auto else_body = Branch(branch->else_body(), branch->return_vars(),
                              both_fall_through ? CopyWithFreshDefinitions(rest) : rest);
      std::vector<VarPtr> results;
      for (const auto& [name, type] : ExitTypes()) results.push_back(std::make_shared<Var>(name, type, stmt->span()));
      out.push_back(std::make_shared<IfStmt>(branch->condition(), Seq(std::move(then_body), *stmt),
                                             Seq(std::move(else_body), *stmt), results, stmt->span()));
      if (!results.empty()) out.push_back(std::make_shared<YieldStmt>(AsExprs(results), stmt->span()));
      return out;
    }
    // The end of a body that yields nothing of its own (the loop carries no values).
    return Exit(std::move(out), {}, false, stmts.empty() ? Span{} : stmts.back()->span());
  }

 private:
  // `body` (a branch of an if, or null) followed by `rest`, in which the if's results are replaced by
  // what the branch yields to them. A value that is not a variable is bound to one first.
  std::vector<StmtPtr> Branch(const StmtPtr& body, const std::vector<VarPtr>& if_results,
                              const std::vector<StmtPtr>& rest) {
    std::vector<StmtPtr> stmts = body ? FlattenStmts(body) : std::vector<StmtPtr>{};
    std::unordered_map<const Var*, VarPtr> yielded;
    if (!stmts.empty() && !if_results.empty())
      if (const auto* yield = stmts.back()->As<YieldStmt>()) {
        const std::vector<ExprPtr> values = yield->values();
        stmts.pop_back();
        for (size_t i = 0; i < if_results.size() && i < values.size(); ++i) {
          auto var = As<Var>(values[i]);
          if (!var) {
            var = std::make_shared<Var>(if_results[i]->name_hint(), values[i]->type(), values[i]->span());
            stmts.push_back(std::make_shared<AssignStmt>(var, values[i], values[i]->span()));
          }
          yielded[if_results[i].get()] = var;
        }
      }
    for (const auto& stmt : rest) stmts.push_back(yielded.empty() ? stmt : SubstituteVars(stmt, yielded));
    return Rewrite(stmts);
  }

  // `out` ended by a yield of what the path hands on: `values` (one per carried value) and the flag,
  // set where the path breaks. Nothing to yield when the loop carries nothing and does not break.
  std::vector<StmtPtr> Exit(std::vector<StmtPtr> out, const std::vector<ExprPtr>& values, bool breaks,
                            const Span& span) {
    std::vector<ExprPtr> handed(values.begin(), values.end());
    if (flag_) handed.push_back(breaks ? ExprPtr(std::make_shared<ConstInt>(1, DataType::INDEX, span)) : flag_);
    if (!handed.empty()) out.push_back(std::make_shared<YieldStmt>(std::move(handed), span));
    return out;
  }

  // The name and type of each value a path hands on.
  std::vector<std::pair<std::string, TypePtr>> ExitTypes() const {
    std::vector<std::pair<std::string, TypePtr>> types;
    for (const auto& iter_arg : carried_) types.emplace_back(iter_arg.var->name_hint(), iter_arg.var->type());
    if (flag_) types.emplace_back(flag_->name_hint(), flag_->type());
    return types;
  }

  static StmtPtr Seq(std::vector<StmtPtr> stmts, const Stmt& at) {
    return std::make_shared<SeqStmts>(std::move(stmts), at.span());
  }
  static std::vector<ExprPtr> AsExprs(const std::vector<VarPtr>& vars) { return {vars.begin(), vars.end()}; }

  const std::vector<IterArg>& carried_;
  VarPtr flag_;
};

// Walks a function, rewriting each loop that jumps once the loops inside it are rewritten.
class JumpRemover final : public SplicingMutator {
 public:
  const std::optional<Diagnostic>& error() const { return error_; }

 protected:
  StmtPtr MutateFor(const std::shared_ptr<const ForStmt>& stmt) override {
    auto mutated = IRMutator::MutateFor(stmt);
    const auto& loop = static_cast<const ForStmt&>(*mutated);
    if (!HoldsJump(loop.body())) return mutated;
    if (!HoldsBreak(loop.body())) {
      BodyRewriter rewriter(loop.iter_args(), nullptr);
      return WithBody(loop, loop.iter_args(), rewriter.Rewrite(FlattenStmts(loop.body())), loop.return_vars());
    }
    // flag = 0; for ..., (flag_i,) ...: if flag_i == 0: <body> else: yield(carried, flag_i)
    const std::string name = fmt::format("_break_flag_{}", flags_++);
    auto index = std::make_shared<ScalarType>(DataType::INDEX);
    auto init = std::make_shared<Var>(name, index, loop.span());
    auto flag = std::make_shared<Var>(name, index, loop.span());
    BodyRewriter rewriter(loop.iter_args(), flag);
    auto running = rewriter.Rewrite(FlattenStmts(loop.body()));
    std::vector<ExprPtr> unchanged;
    std::vector<VarPtr> guard_results;
    for (const auto& iter_arg : loop.iter_args()) {
      unchanged.push_back(iter_arg.var);
      guard_results.push_back(std::make_shared<Var>(iter_arg.var->name_hint(), iter_arg.var->type(), loop.span()));
    }
    unchanged.push_back(flag);
    guard_results.push_back(std::make_shared<Var>(name, index, loop.span()));
    auto zero = std::make_shared<ConstInt>(0, DataType::INDEX, loop.span());
    auto not_broken = MakeBinary(BinaryOp::Eq, flag, zero, loop.span());
    if (!not_broken) {
      error_ = not_broken.error();
      return mutated;
    }
    auto guard = std::make_shared<IfStmt>(
        *not_broken, std::make_shared<SeqStmts>(std::move(running), loop.span()),
        std::make_shared<SeqStmts>(std::vector<StmtPtr>{std::make_shared<YieldStmt>(unchanged, loop.span())},
                                   loop.span()),
        guard_results, loop.span());
    std::vector<ExprPtr> results(guard_results.begin(), guard_results.end());
    auto iter_args = loop.iter_args();
    iter_args.push_back(IterArg{flag, init});
    auto return_vars = loop.return_vars();
    return_vars.push_back(std::make_shared<Var>(name, index, loop.span()));
    auto rewritten = WithBody(loop, std::move(iter_args),
                              {guard, std::make_shared<YieldStmt>(std::move(results), loop.span())},
                              std::move(return_vars));
    return std::make_shared<SeqStmts>(
        std::vector<StmtPtr>{std::make_shared<AssignStmt>(init, zero, loop.span()), rewritten}, loop.span());
  }

  // A while loop re-tests its condition after each iteration: a continue needs no flag. A break would
  // need the flag in the condition; the frontend accepts jumps in pl.range loops only.
  StmtPtr MutateWhile(const std::shared_ptr<const WhileStmt>& stmt) override {
    auto mutated = IRMutator::MutateWhile(stmt);
    const auto& loop = static_cast<const WhileStmt&>(*mutated);
    if (!HoldsJump(loop.body())) return mutated;
    if (HoldsBreak(loop.body())) {
      if (!error_)
        error_ = Diagnostic{DiagnosticKind::InvalidOperation, "'break' in a while loop is not supported", loop.span(),
                            "use a pl.range loop with the trip count, or fold the exit into the condition"};
      return mutated;
    }
    BodyRewriter rewriter(loop.iter_args(), nullptr);
    return std::make_shared<WhileStmt>(loop.condition(), loop.iter_args(),
                                       std::make_shared<SeqStmts>(rewriter.Rewrite(FlattenStmts(loop.body())),
                                                                  loop.body()->span()),
                                       loop.return_vars(), loop.span());
  }

 private:
  static StmtPtr WithBody(const ForStmt& loop, std::vector<IterArg> iter_args, std::vector<StmtPtr> body,
                          std::vector<VarPtr> return_vars) {
    return std::make_shared<ForStmt>(loop.loop_var(), loop.start(), loop.stop(), loop.step(), std::move(iter_args),
                                     std::make_shared<SeqStmts>(std::move(body), loop.body()->span()),
                                     std::move(return_vars), loop.kind(), loop.span());
  }

  int flags_ = 0;
  std::optional<Diagnostic> error_;
};

}  // namespace

Pass CtrlFlowTransform() {
  return Pass("CtrlFlowTransform", {}, {IRProperty::StructuredCtrlFlow}, {},
              [](const ProgramPtr& program, const PassContext&) -> Result<ProgramPtr> {
                return RewriteEachFunction(program, [](const FunctionPtr& function) -> Result<FunctionPtr> {
                  JumpRemover remover;
                  return MutateBody(function, remover);
                });
              });
}

}  // namespace pypto::passes
