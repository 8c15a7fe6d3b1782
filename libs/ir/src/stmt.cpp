#include "pypto/ir/stmt.h"

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

const YieldStmt* TrailingYield(const StmtPtr& body) {
  if (!body) return nullptr;
  if (const auto* seq = body->As<SeqStmts>()) return seq->stmts().empty() ? nullptr : TrailingYield(seq->stmts().back());
  return body->As<YieldStmt>();
}

}  // namespace pypto::ir
