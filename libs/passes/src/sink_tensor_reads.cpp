#include "sink_tensor_reads.h"

#include <unordered_map>
#include <unordered_set>

#include "pypto/ir/functor.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

bool IsTensorRead(const Expr& value) {
  const auto* call = value.As<Call>();
  return call && call->is_op_call() && call->target_name() == "tensor.read";
}

// The orchestration's `s = tensor.read(...)` assignments (not those inside kernel regions).
class ReadFinder final : public IRVisitor {
 public:
  std::unordered_map<const Var*, const AssignStmt*> reads;

 protected:
  void VisitAssign(const std::shared_ptr<const AssignStmt>& stmt) override {
    if (stmt->var()->type()->As<ScalarType>() && IsTensorRead(*stmt->value())) reads[stmt->var().get()] = stmt.get();
    IRVisitor::VisitAssign(stmt);
  }
  void VisitInCoreScope(const std::shared_ptr<const InCoreScopeStmt>&) override {}
};

// Every variable read anywhere in a body.
class AllUses final : public IRVisitor {
 public:
  std::unordered_set<const Var*> used;

 protected:
  void VisitVar(const std::shared_ptr<const Var>& var) override { used.insert(var.get()); }
  void VisitAssign(const std::shared_ptr<const AssignStmt>& stmt) override { VisitExpr(stmt->value()); }
};

// Gives each region its own copies of the reads it uses.
class RegionReads final : public IRMutator {
 public:
  explicit RegionReads(const std::unordered_map<const Var*, const AssignStmt*>& reads) : reads_(reads) {}

 protected:
  StmtPtr MutateInCoreScope(const std::shared_ptr<const InCoreScopeStmt>& scope) override {
    AllUses uses;
    uses.VisitStmt(scope->body());
    std::vector<StmtPtr> body;
    std::unordered_map<const Var*, VarPtr> local;
    for (const auto& [var, assign] : reads_) {
      if (!uses.used.contains(var)) continue;
      auto copy = std::make_shared<Var>(var->name_hint(), var->type(), var->span());
      body.push_back(std::make_shared<AssignStmt>(copy, assign->value(), assign->span()));
      local[var] = copy;
    }
    if (body.empty()) return scope;
    for (const auto& stmt : FlattenStmts(SubstituteVars(scope->body(), local))) body.push_back(stmt);
    return std::make_shared<InCoreScopeStmt>(scope->name_hint(), std::make_shared<SeqStmts>(std::move(body),
                                                                                            scope->body()->span()),
                                             scope->span(), scope->block_num(), scope->sync_start(), scope->order());
  }

 private:
  const std::unordered_map<const Var*, const AssignStmt*>& reads_;
};

// Drops the orchestration reads nothing uses any more.
class DeadReads final : public IRMutator {
 public:
  explicit DeadReads(std::unordered_set<const Var*> dead) : dead_(std::move(dead)) {}

 protected:
  StmtPtr MutateSeq(const std::shared_ptr<const SeqStmts>& seq) override {
    std::vector<StmtPtr> kept;
    bool changed = false;
    for (const auto& stmt : seq->stmts()) {
      const auto* assign = stmt->As<AssignStmt>();
      if (assign && dead_.contains(assign->var().get())) {
        changed = true;
        continue;
      }
      auto mutated = MutateStmt(stmt);
      changed |= mutated != stmt;
      kept.push_back(mutated);
    }
    return changed ? std::make_shared<SeqStmts>(std::move(kept), seq->span()) : seq;
  }
  StmtPtr MutateInCoreScope(const std::shared_ptr<const InCoreScopeStmt>& scope) override { return scope; }

 private:
  std::unordered_set<const Var*> dead_;
};

}  // namespace

StmtPtr SinkTensorReads(const StmtPtr& orchestration_body) {
  ReadFinder finder;
  finder.VisitStmt(orchestration_body);
  if (finder.reads.empty()) return orchestration_body;
  StmtPtr body = RegionReads(finder.reads).MutateStmt(orchestration_body);
  AllUses uses;
  uses.VisitStmt(body);
  std::unordered_set<const Var*> dead;
  for (const auto& [var, assign] : finder.reads)
    if (!uses.used.contains(var)) dead.insert(var);
  return dead.empty() ? body : DeadReads(std::move(dead)).MutateStmt(body);
}

}  // namespace pypto::passes
