#include "spmd_launch.h"

#include <fmt/format.h>

#include <functional>

#include "pypto/ir/expr.h"

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

ir::ExprPtr WithLaunch(const ir::Call& call, ir::Call::Kwargs kwargs, ir::LaunchOrder order) {
  return std::make_shared<ir::Call>(call.callee(), call.args(), call.type(), call.span(), call.arg_directions(),
                                    std::move(kwargs), std::move(order));
}

}  // namespace

ir::Result<ir::StmtPtr> LaunchOnBlocks(const ir::StmtPtr& body, const SpmdLaunchSpec& spec, ir::LaunchOrder order,
                                       const ir::Span& span) {
  if (spec.core_num < 1)
    return ir::MakeError(ir::DiagnosticKind::Type,
                         fmt::format("pl.spmd core_num must be at least 1, got {}", spec.core_num), span);
  return RewriteKernelCall(
      body, span, "a pl.spmd scope", "write `with pl.spmd(core_num=N):` around one `out = self.kernel(...)`",
      [&](const ir::Call& call) -> ir::Result<ir::ExprPtr> {
        // The launch keywords are added once: a second pl.spmd around the same call is an error.
        ir::Call::Kwargs kwargs = call.kwargs();
        for (const auto& [key, _] : kwargs)
          if (key == ir::kCoreNumKwarg) return ir::MakeError(ir::DiagnosticKind::Syntax, "nested pl.spmd scopes", span);
        kwargs.emplace_back(ir::kCoreNumKwarg, spec.core_num);
        if (spec.sync_start) kwargs.emplace_back(ir::kSyncStartKwarg, true);
        return WithLaunch(call, std::move(kwargs), std::move(order));
      });
}

ir::Result<ir::StmtPtr> LaunchInOrder(const ir::StmtPtr& stmt, ir::LaunchOrder order, const ir::Span& span) {
  return RewriteKernelCall(stmt, span, "pl.submit", "write `out, tid = pl.submit(self.kernel, x, out, deps=[...])`",
                           [&](const ir::Call& call) { return WithLaunch(call, call.kwargs(), std::move(order)); });
}

}  // namespace pypto::frontend
