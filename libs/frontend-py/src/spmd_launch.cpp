#include "spmd_launch.h"

#include <fmt/format.h>

#include <functional>

#include "pypto/ir/expr.h"
#include "pypto/ir/functor.h"
#include "pypto/ir/printer.h"
#include "pypto/ir/submit_dumps.h"

namespace pypto::frontend {
namespace {

ir::Result<ir::StmtPtr> NotOneKernelCall(const ir::Span& span, const char* what, const char* help) {
  return ir::MakeError(ir::DiagnosticKind::Syntax, fmt::format("{} holds exactly one kernel call", what), span, help);
}

using CallRewrite = std::function<ir::Result<ir::ExprPtr>(const ir::Call&)>;

// The one statement of `body`, a kernel call assigned or evaluated, with the call rewritten.
ir::Result<ir::StmtPtr> RewriteKernelCall(const ir::StmtPtr& body, const ir::Span& span, const char* what,
                                          const char* help, const CallRewrite& rewrite) {
  const auto* seq = body->As<ir::SeqStmts>();
  const ir::StmtPtr stmt = seq && seq->stmts().size() == 1 ? seq->stmts()[0] : (seq ? nullptr : body);
  if (!stmt) return NotOneKernelCall(span, what, help);
  const auto* assign = stmt->As<ir::AssignStmt>();
  const auto* eval = stmt->As<ir::EvalStmt>();
  const ir::ExprPtr value = assign ? assign->value() : eval ? eval->expr() : nullptr;
  const auto* call = value ? value->As<ir::Call>() : nullptr;
  if (!call || call->is_op_call()) return NotOneKernelCall(stmt->span().known() ? stmt->span() : span, what, help);
  auto rewritten = rewrite(*call);
  if (!rewritten) return pypto::unexpected(rewritten.error());
  if (assign) return ir::StmtPtr(std::make_shared<ir::AssignStmt>(assign->var(), *rewritten, assign->span()));
  return ir::StmtPtr(std::make_shared<ir::EvalStmt>(*rewritten, eval->span()));
}

ir::ExprPtr WithLaunch(const ir::Call& call, ir::Call::Kwargs kwargs, ir::LaunchOrder order, ir::ExprPtr core_num) {
  return std::make_shared<ir::Call>(call.callee(), call.args(), call.type(), call.span(), call.arg_directions(),
                                    std::move(kwargs), std::move(order), std::move(core_num));
}

// The first call in `expr` other than a scalar cast: a value no orchestration scalar expression holds.
const ir::Call* FirstNonCast(const ir::ExprPtr& expr) {
  struct Finder final : ir::IRVisitor {
    const ir::Call* found = nullptr;
    void VisitCall(const std::shared_ptr<const ir::Call>& call) override {
      if (found) return;
      if (!call->is_op_call() || call->target_name() != "scalar.cast") found = call.get();
      else ir::IRVisitor::VisitCall(call);
    }
  } finder;
  finder.VisitExpr(expr);
  return finder.found;
}

}  // namespace

ir::Result<ir::ExprPtr> CheckBlockCount(const ir::ExprPtr& count, const ir::Span& span) {
  const auto* scalar = count->type()->As<ir::ScalarType>();
  if (!scalar || !ir::IsInteger(scalar->dtype()))
    return ir::MakeError(ir::DiagnosticKind::Type,
                         fmt::format("pl.spmd core_num must be an integer, got `{}` of type {}", ir::PrintExpr(count),
                                     count->type()->str()),
                         span);
  const ir::Call* call = FirstNonCast(count);
  if (call && call->target_name().starts_with("system.available_"))
    return ir::MakeError(ir::DiagnosticKind::Type,
                         fmt::format("pl.spmd core_num `{}` is not supported yet: the run's device counts are not "
                                     "passed to orchestration code",
                                     ir::PrintExpr(count)),
                         span,
                         "give the launch width as a number (the simulated SoCs have 24 clusters of one AIC and two "
                         "AIV on a2a3, 36 on a5)");
  if (call)
    return ir::MakeError(ir::DiagnosticKind::Type,
                         fmt::format("pl.spmd core_num must be computed from orchestration scalars; `{}` calls '{}'",
                                     ir::PrintExpr(count), call->target_name()),
                         span);
  if (auto literal = ir::AsConstInt(count); literal && *literal < 0)
    return ir::MakeError(ir::DiagnosticKind::Type, fmt::format("pl.spmd core_num must be at least 0, got {}", *literal),
                         span);
  return count;
}

// The views that orchestration slices passed to the kernel became (FunctionParser::SliceAsView: a
// tensor.slice assigned just before the call, `w = pl.slice(ws, [1, D], [layer, 0])` then
// `out = ext(out, w)` in the scope) belong to the orchestration: they go before the launch, and the
// scope launches its one call.
namespace {
bool IsSliceView(const ir::StmtPtr& stmt) {
  const auto* assign = stmt->As<ir::AssignStmt>();
  const auto* call = assign ? assign->value()->As<ir::Call>() : nullptr;
  return call && call->is_op_call() && call->target_name() == "tensor.slice";
}
}  // namespace

ir::Result<ir::StmtPtr> LaunchOnBlocks(const ir::StmtPtr& body, const SpmdLaunchSpec& spec, ir::LaunchOrder order,
                                       const ir::Span& span) {
  std::vector<ir::StmtPtr> views;
  ir::StmtPtr launched_stmt = body;
  if (const auto* seq = body->As<ir::SeqStmts>()) {
    std::vector<ir::StmtPtr> rest;
    for (const auto& stmt : seq->stmts())
      (rest.empty() && IsSliceView(stmt) ? views : rest).push_back(stmt);
    if (!views.empty()) launched_stmt = std::make_shared<ir::SeqStmts>(std::move(rest));
  }
  auto launched = RewriteKernelCall(
      launched_stmt, span, "a pl.spmd scope", "write `with pl.spmd(core_num=N):` around one `out = self.kernel(...)`",
      [&](const ir::Call& call) -> ir::Result<ir::ExprPtr> {
        // The launch is set once: a second pl.spmd around the same call is an error.
        if (call.core_num()) return ir::MakeError(ir::DiagnosticKind::Syntax, "nested pl.spmd scopes", span);
        ir::Call::Kwargs kwargs = call.kwargs();
        if (spec.sync_start) kwargs.emplace_back(ir::kSyncStartKwarg, true);
        return WithLaunch(call, std::move(kwargs), std::move(order), spec.core_num);
      });
  if (!launched || views.empty()) return launched;
  views.push_back(*launched);
  return ir::StmtPtr(std::make_shared<ir::SeqStmts>(std::move(views)));
}

ir::Result<ir::StmtPtr> LaunchInOrder(const ir::StmtPtr& stmt, ir::LaunchOrder order, const ir::Span& span,
                                      const std::vector<size_t>& dumped) {
  return RewriteKernelCall(stmt, span, "pl.submit", "write `out, tid = pl.submit(self.kernel, x, out, deps=[...])`",
                           [&](const ir::Call& call) {
                             return WithLaunch(call, ir::WithDumpedArgs(call.kwargs(), dumped), std::move(order),
                                               call.core_num());
                           });
}

}  // namespace pypto::frontend
