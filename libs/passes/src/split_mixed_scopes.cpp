// SplitMixedScopes: a pl.at scope whose body runs both cube and vector work becomes two
// consecutive scopes, the cube part (`<name>_aic`) followed by the vector part (`<name>_aiv`).
//
// On the device a mixed kernel runs as one AIC + AIV group with the cube result crossing over a
// ring of on-chip slots, and pl.split(...) halves the work so both units overlap. On the simulator
// the same numbers come out of running the two halves as two dependent tasks: OutlineIncoreScopes
// hands every tile the vector part reads from the cube part over through a global-memory tensor
// (stored whole from Acc, loaded whole into Vec). The split mode and cross_core_slot only change
// how the device overlaps the halves, so they do not matter here.
//
// The cube part is the backward slice of the scope's cube ops (matmuls and what computes their
// operands); everything else is the vector part. A loop or an if of the scope's body is one
// statement of the slice, defining its results: a K-reduction loop accumulating a matmul belongs
// to the cube part whole. A scope is split only when that is plainly safe: no loop or if of its body
// mixes cube and vector work, and no vector statement that writes a tensor comes before a cube
// statement (running the cube part first must not reorder memory effects), and no tile is sharded
// between the vector lanes (pl.aiv_shard, which needs a pipe). Any other mixed scope is left whole,
// and ExpandMixedKernel splits it into the members of a mixed task.
#include <algorithm>
#include <unordered_set>

#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"
#include "pypto/passes/passes.h"
#include "vars_read.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

const Call* CallOf(const StmtPtr& stmt) {
  if (const auto* assign = stmt->As<AssignStmt>()) return assign->value()->As<Call>();
  if (const auto* eval = stmt->As<EvalStmt>()) return eval->expr()->As<Call>();
  return nullptr;
}

// Ops that only move data or make tiles run on either side; they do not make a part vector work.
bool IsDataMovement(const Call& call) {
  static const std::unordered_set<std::string_view> kOps = {"tile.load",   "tile.store",  "tile.move",
                                                            "tile.reshape", "tile.create", "tensor.create",
                                                            "tile.set_validshape", "tile.reinterpret_view"};
  return kOps.contains(call.target_name());
}

bool IsCubeOp(const Call& call) { return call.is_op_call() && call.op()->affinity == CoreAffinity::Cube; }

bool IsVectorOp(const Call& call) { return call.is_op_call() && !IsCubeOp(call) && !IsDataMovement(call); }

bool WritesTensor(const Call& call) { return call.is_op_call() && call.op()->writes_arg.has_value(); }

// The work a statement of the scope's body does, over every call in it (a loop's or an if's too).
struct Work {
  bool cube = false, vector = false, writes_tensor = false;
  bool shards = false;  // hands a cube tile to the vector lanes (tile.aiv_shard), over a pipe
};

Work WorkOf(const StmtPtr& stmt) {
  struct Finder final : IRVisitor {
    Work work;
    void VisitCall(const std::shared_ptr<const Call>& call) override {
      work.cube |= IsCubeOp(*call);
      work.vector |= IsVectorOp(*call);
      work.writes_tensor |= WritesTensor(*call);
      work.shards |= call->is_op_call() && call->target_name() == "tile.aiv_shard";
      IRVisitor::VisitCall(call);
    }
  } finder;
  finder.VisitStmt(stmt);
  return finder.work;
}

// The variables a statement of the body defines for the statements after it.
std::vector<const Var*> VarsDefined(const StmtPtr& stmt) {
  std::vector<const Var*> vars;
  if (const auto* assign = stmt->As<AssignStmt>()) vars.push_back(assign->var().get());
  if (auto loop = AsLoop(*stmt))
    for (const auto& var : loop->return_vars) vars.push_back(var.get());
  if (const auto* branch = stmt->As<IfStmt>())
    for (const auto& var : branch->return_vars()) vars.push_back(var.get());
  return vars;
}

// Which statements of the body belong to the cube part: the cube ops and, transitively, the
// statements defining what they read. Empty when the body cannot be split: a statement that is not a
// call, a loop or an if, or a loop or an if mixing cube and vector work. `works[i]` is WorkOf(stmts[i]).
std::vector<bool> CubeSlice(const std::vector<StmtPtr>& stmts, const std::vector<Work>& works) {
  std::vector<bool> cube(stmts.size(), false);
  std::unordered_set<const Var*> needed;
  for (size_t i = stmts.size(); i-- > 0;) {
    const bool compound = AsLoop(*stmts[i]) || stmts[i]->Is<IfStmt>();
    if (!compound && !CallOf(stmts[i])) return {};
    if (compound && works[i].cube && works[i].vector) return {};
    const auto defined = VarsDefined(stmts[i]);
    cube[i] = works[i].cube || std::ranges::any_of(defined, [&](const Var* var) { return needed.contains(var); });
    if (!cube[i]) continue;
    for (const auto& var : VarsRead(stmts[i])) needed.insert(var.get());
  }
  return cube;
}

// Whether running the cube part before the vector part keeps every memory effect in order.
bool CanHoistCubePart(const std::vector<Work>& works, const std::vector<bool>& cube) {
  size_t last_cube = 0;
  for (size_t i = 0; i < cube.size(); ++i)
    if (cube[i]) last_cube = i;
  for (size_t i = 0; i < last_cube; ++i)
    if (!cube[i] && works[i].writes_tensor) return false;
  return true;
}

std::string PartName(const std::string& name_hint, const char* suffix) {
  return name_hint.empty() ? "" : name_hint + suffix;
}

// The scope itself, or its cube part followed by its vector part.
std::vector<StmtPtr> SplitScope(const InCoreScopeStmt& scope, const StmtPtr& original) {
  // The blocks of a pl.spmd scope would all hand their cube results over through one tensor.
  if (scope.block_num()) return {original};
  const auto stmts = FlattenStmts(scope.body());
  std::vector<Work> works;
  for (const auto& stmt : stmts) works.push_back(WorkOf(stmt));
  // A cube tile sharded between the vector lanes crosses over a pipe, which only a mixed kernel has.
  if (std::ranges::any_of(works, &Work::shards)) return {original};
  const auto cube = CubeSlice(stmts, works);
  if (cube.empty()) return {original};
  std::vector<StmtPtr> cube_part, vector_part;
  bool has_vector_op = false;
  for (size_t i = 0; i < stmts.size(); ++i) {
    (cube[i] ? cube_part : vector_part).push_back(stmts[i]);
    has_vector_op |= !cube[i] && works[i].vector;
  }
  if (cube_part.empty() || !has_vector_op || !CanHoistCubePart(works, cube)) return {original};
  const Span& span = scope.span();
  // Both parts wait for what the scope waited for, and allow early resolve if it did; the vector part,
  // which reads the cube part's results and so finishes last, is the task `as tid` names.
  const LaunchOrder cube_order{
      .deps = scope.order().deps, .task_id = nullptr, .allow_early_resolve = scope.order().allow_early_resolve};
  return {std::make_shared<InCoreScopeStmt>(PartName(scope.name_hint(), "_aic"),
                                            std::make_shared<SeqStmts>(std::move(cube_part), span), span, nullptr,
                                            false, cube_order),
          std::make_shared<InCoreScopeStmt>(PartName(scope.name_hint(), "_aiv"),
                                            std::make_shared<SeqStmts>(std::move(vector_part), span), span, nullptr,
                                            false, scope.order())};
}

// Splits the scopes of a body in place, keeping them at the level of the body that holds them.
class ScopeSplitter final : public IRMutator {
 protected:
  StmtPtr MutateSeq(const std::shared_ptr<const SeqStmts>& seq) override {
    std::vector<StmtPtr> stmts;
    bool changed = false;
    for (const auto& stmt : seq->stmts()) {
      if (const auto* scope = stmt->As<InCoreScopeStmt>()) {
        auto parts = SplitScope(*scope, stmt);
        changed |= parts.size() > 1;
        stmts.insert(stmts.end(), parts.begin(), parts.end());
        continue;
      }
      auto mutated = MutateStmt(stmt);
      changed |= mutated != stmt;
      stmts.push_back(mutated);
    }
    return changed ? std::make_shared<SeqStmts>(std::move(stmts), seq->span()) : StmtPtr(seq);
  }
};

}  // namespace

Pass SplitMixedScopes() {
  return Pass("SplitMixedScopes", {IRProperty::NoNestedCalls}, {}, {},
              [](const ProgramPtr& program, const PassContext&) -> Result<ProgramPtr> {
                return RewriteEachFunction(program, [](const FunctionPtr& function) -> Result<FunctionPtr> {
                  if (IsKernel(function->type())) return function;
                  auto body = ScopeSplitter().MutateStmt(function->body());
                  return body == function->body() ? function : function->WithBody(body);
                });
              });
}

}  // namespace pypto::passes
