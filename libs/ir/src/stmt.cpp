#include "pypto/ir/stmt.h"

#include <utility>

namespace pypto::ir {

const char* ForKindName(ForKind kind) {
  switch (kind) {
    case ForKind::Sequential: return "range";
    case ForKind::Parallel: return "parallel";
    case ForKind::Unroll: return "unroll";
    case ForKind::Pipeline: return "pipeline";
  }
  return "range";
}

namespace {
constexpr std::pair<CarryKind, const char*> kCarryNames[] = {
    {CarryKind::Unclassified, "unclassified"}, {CarryKind::Scalar, "scalar"}, {CarryKind::TaskId, "task_id"},
    {CarryKind::TaskIdArray, "task_id_array"}, {CarryKind::Alias, "alias"},   {CarryKind::Rebind, "rebind"}};
}  // namespace

const char* CarryKindName(CarryKind kind) {
  for (const auto& [k, name] : kCarryNames)
    if (k == kind) return name;
  return "unclassified";
}

std::optional<CarryKind> CarryKindNamed(std::string_view name) {
  for (const auto& [kind, k_name] : kCarryNames)
    if (name == k_name) return kind;
  return std::nullopt;
}

std::optional<LoopView> AsLoop(const Stmt& stmt) {
  if (const auto* loop = stmt.As<ForStmt>()) return LoopView{loop->iter_args(), loop->body(), loop->return_vars()};
  if (const auto* loop = stmt.As<WhileStmt>()) return LoopView{loop->iter_args(), loop->body(), loop->return_vars()};
  return std::nullopt;
}

const YieldStmt* TrailingYield(const StmtPtr& body) {
  if (!body) return nullptr;
  if (const auto* seq = body->As<SeqStmts>()) return seq->stmts().empty() ? nullptr : TrailingYield(seq->stmts().back());
  return body->As<YieldStmt>();
}

const JumpStmt* AsJump(const Stmt& stmt) {
  if (const auto* jump = stmt.As<BreakStmt>()) return jump;
  return stmt.As<ContinueStmt>();
}

bool EndsInJump(const StmtPtr& body) {
  if (!body) return false;
  if (const auto* seq = body->As<SeqStmts>()) return !seq->stmts().empty() && EndsInJump(seq->stmts().back());
  if (const auto* branch = body->As<IfStmt>())
    return EndsInJump(branch->then_body()) && EndsInJump(branch->else_body());
  return AsJump(*body) != nullptr;
}

}  // namespace pypto::ir
