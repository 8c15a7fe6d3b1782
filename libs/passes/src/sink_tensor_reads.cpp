#include "sink_tensor_reads.h"

#include <fmt/format.h>

#include <unordered_map>
#include <unordered_set>

#include "pypto/ir/functor.h"
#include "vars_read.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

bool IsOpCall(const Expr& value, std::string_view op) {
  const auto* call = value.As<Call>();
  return call && call->is_op_call() && call->target_name() == op;
}

// The orchestration statements that compute from tensor data, in program order: element reads,
// tensor slices (loads), and the scalar arithmetic that uses their results. Kernel regions are not
// entered (their reads are the kernels').
class TensorDerived final : public IRVisitor {
 public:
  std::vector<const AssignStmt*> order;
  std::unordered_map<const Var*, const AssignStmt*> def;

 protected:
  void VisitAssign(const std::shared_ptr<const AssignStmt>& stmt) override {
    const auto& type = *stmt->var()->type();
    const bool read = type.As<ScalarType>() && IsOpCall(*stmt->value(), "tensor.read");
    const bool load = type.As<TileType>() && IsOpCall(*stmt->value(), "tile.load");
    bool derived = false;
    const bool arithmetic = !stmt->value()->As<Call>() || IsOpCall(*stmt->value(), "scalar.cast");
    if (type.As<ScalarType>() && !read && arithmetic) {
      for (const auto& operand : VarsRead(stmt->value())) derived |= def.contains(operand.get());
    }
    if (read || load || derived) {
      order.push_back(stmt.get());
      def[stmt->var().get()] = stmt.get();
    }
  }
  void VisitInCoreScope(const std::shared_ptr<const InCoreScopeStmt>&) override {}
};

// Gives each region its own copies of the tensor-derived statements it needs.
class RegionCopies final : public IRMutator {
 public:
  explicit RegionCopies(const TensorDerived& derived) : derived_(derived) {}

 protected:
  StmtPtr MutateInCoreScope(const std::shared_ptr<const InCoreScopeStmt>& scope) override {
    std::unordered_set<const Var*> needed;
    std::vector<const Var*> pending;
    for (const auto& var : VarsRead(scope->body()))
      if (derived_.def.contains(var.get())) pending.push_back(var.get());
    while (!pending.empty()) {  // and what those statements read in turn
      const Var* var = pending.back();
      pending.pop_back();
      if (!needed.insert(var).second) continue;
      for (const auto& operand : VarsRead(derived_.def.at(var)->value()))
        if (derived_.def.contains(operand.get())) pending.push_back(operand.get());
    }
    if (needed.empty()) return scope;
    std::unordered_map<const Var*, VarPtr> local;
    std::vector<StmtPtr> body;
    for (const AssignStmt* assign : derived_.order) {
      if (!needed.contains(assign->var().get())) continue;
      auto copy = std::make_shared<Var>(assign->var()->name_hint(), assign->var()->type(), assign->var()->span());
      auto stmt = std::make_shared<AssignStmt>(copy, assign->value(), assign->span());
      body.push_back(SubstituteVars(stmt, local));
      local[assign->var().get()] = copy;
    }
    for (const auto& stmt : FlattenStmts(SubstituteVars(scope->body(), local))) body.push_back(stmt);
    return std::make_shared<InCoreScopeStmt>(
        scope->name_hint(), std::make_shared<SeqStmts>(std::move(body), scope->body()->span()), scope->span(),
        scope->block_num(), scope->sync_start(), scope->order());
  }

 private:
  const TensorDerived& derived_;
};

// Drops the orchestration statements nothing uses any more.
class DeadStatements final : public IRMutator {
 public:
  explicit DeadStatements(std::unordered_set<const Var*> dead) : dead_(std::move(dead)) {}

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

Result<StmtPtr> SinkTensorReads(const StmtPtr& orchestration_body) {
  TensorDerived derived;
  derived.VisitStmt(orchestration_body);
  if (derived.order.empty()) return orchestration_body;
  StmtPtr body = RegionCopies(derived).MutateStmt(orchestration_body);
  // What the orchestration still reads, after the regions have their copies: a statement is dead
  // once neither the orchestration nor a live tensor-derived statement reads its value.
  std::unordered_set<const Var*> dead;
  for (const AssignStmt* assign : derived.order) dead.insert(assign->var().get());
  std::unordered_set<const Var*> live;
  for (const auto& var : VarsRead(DeadStatements(dead).MutateStmt(body))) live.insert(var.get());
  for (auto it = derived.order.rbegin(); it != derived.order.rend(); ++it) {
    const Var* var = (*it)->var().get();
    if (!live.contains(var)) continue;
    dead.erase(var);
    for (const auto& operand : VarsRead((*it)->value())) live.insert(operand.get());
  }
  for (const AssignStmt* assign : derived.order) {
    if (dead.contains(assign->var().get()) || !IsOpCall(*assign->value(), "tile.load")) continue;
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("'{}' slices a tensor in orchestration code and is used there; only the pl.at "
                                 "scopes that read it can use such a slice",
                                 assign->var()->name_hint()),
                     assign->value()->span(), "slice the tensor inside the pl.at scope that uses it");
  }
  return dead.empty() ? body : DeadStatements(std::move(dead)).MutateStmt(body);
}

}  // namespace pypto::passes
