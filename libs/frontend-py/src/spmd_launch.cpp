#include "spmd_launch.h"

#include <fmt/format.h>

#include "pypto/ir/expr.h"

namespace pypto::frontend {
namespace {

ir::Result<ir::StmtPtr> NotOneKernelCall(const ir::Span& span) {
  return ir::MakeError(ir::DiagnosticKind::Syntax, "a pl.spmd scope holds exactly one kernel call", span,
                       "write `with pl.spmd(core_num=N):` around one `out = self.kernel(...)`");
}

// The call with the launch keywords added (a second pl.spmd around the same call is an error).
ir::Result<ir::ExprPtr> WithLaunch(const ir::Call& call, const SpmdLaunchSpec& spec, const ir::Span& span) {
  ir::Call::Kwargs kwargs = call.kwargs();
  for (const auto& [key, _] : kwargs)
    if (key == ir::kCoreNumKwarg) return ir::MakeError(ir::DiagnosticKind::Syntax, "nested pl.spmd scopes", span);
  kwargs.emplace_back(ir::kCoreNumKwarg, spec.core_num);
  if (spec.sync_start) kwargs.emplace_back(ir::kSyncStartKwarg, true);
  return ir::ExprPtr(std::make_shared<ir::Call>(call.callee(), call.args(), call.type(), call.span(),
                                                call.arg_directions(), std::move(kwargs)));
}

}  // namespace

ir::Result<ir::StmtPtr> LaunchOnBlocks(const ir::StmtPtr& body, const SpmdLaunchSpec& spec, const ir::Span& span) {
  if (spec.core_num < 1)
    return ir::MakeError(ir::DiagnosticKind::Type,
                         fmt::format("pl.spmd core_num must be at least 1, got {}", spec.core_num), span);
  const auto* seq = body->As<ir::SeqStmts>();
  const ir::StmtPtr stmt = seq && seq->stmts().size() == 1 ? seq->stmts()[0] : (seq ? nullptr : body);
  if (!stmt) return NotOneKernelCall(span);
  const auto* assign = stmt->As<ir::AssignStmt>();
  const auto* eval = stmt->As<ir::EvalStmt>();
  const ir::ExprPtr value = assign ? assign->value() : eval ? eval->expr() : nullptr;
  const auto* call = value ? value->As<ir::Call>() : nullptr;
  if (!call || call->is_op_call()) return NotOneKernelCall(stmt->span().known() ? stmt->span() : span);
  auto launched = WithLaunch(*call, spec, span);
  if (!launched) return pypto::unexpected(launched.error());
  if (assign) return ir::StmtPtr(std::make_shared<ir::AssignStmt>(assign->var(), *launched, assign->span()));
  return ir::StmtPtr(std::make_shared<ir::EvalStmt>(*launched, eval->span()));
}

}  // namespace pypto::frontend
