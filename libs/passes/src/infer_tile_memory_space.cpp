// InferTileMemorySpace: gives every tile of a kernel the buffer its uses demand.
//
// The frontend loads every tensor slice (and every whole tensor a unified op is given) into Vec,
// and the matmul ops accept Vec or Mat operands, leaving their placement to this pass. Inside each
// kernel it
//   * places matmul operands: a tile loaded from global memory with no explicit target_memory is
//     loaded into Mat instead, and a tile.move into Left/Right is inserted before the matmul (at
//     most one per tile and buffer in a block; inner blocks reuse moves of enclosing blocks);
//   * loads a tile twice when both sides read it: the Vec load stays for the vector ops and a Mat
//     twin `<name>_mat` is loaded right after it for the cube. Two loads from global memory keep
//     each core type self-contained; one load plus a move would cross from the vector to the cube
//     core through a cross-core pipe;
//   * moves a tile computed on one core to the other where it is read there: an Acc product read
//     by a vector op gets a tile.move into Vec, and a Vec tile computed by vector ops and
//     multiplied by the cube a tile.move into Mat (then into Left/Right). ExpandMixedKernel turns
//     each such move into a push and a pop between the kernel's AIC and AIV members;
//   * casts a product (or a window of it) on the vector core when only vector ops read the cast:
//     the Acc operand is moved to Vec and converted there, not converted into a second Acc tile;
//   * leaves explicit placement alone: a load with target_memory keeps it (a Mat tile given to a
//     matmul only gets its move), and tiles already in Left/Right are used as they are;
//   * drops a `pl.create_tensor` whose value is never read (a placeholder rebound before use);
//   * refuses, naming the op and its location, what it cannot place: a vector op reading a Mat,
//     Left or Right tile, a matmul operand in a buffer it cannot be moved from, and a tensor
//     created and used inside a kernel;
//   * refuses an in-place write into a tile.slice window whose result nobody reads: the window is
//     a copy, so the write would vanish instead of landing in the sliced tile (except a product
//     accumulated into a window of an Acc matrix, a view of it: acc_window_view.h).
#include <fmt/format.h>

#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "acc_window_view.h"
#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"
#include "pypto/passes/passes.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

using VarSet = std::unordered_set<const Var*>;

bool IsOp(const Call& call, std::string_view name) { return call.is_op_call() && call.target_name() == name; }

// The cube operand buffer (Left, Right, Bias) argument `index` of `call` is read from; nullopt for
// other arguments and ops.
std::optional<MemorySpace> OperandBuffer(const Call& call, size_t index) {
  if (!call.is_op_call()) return std::nullopt;
  for (const auto& [arg, buffer] : call.op()->cube_operands)
    if (static_cast<size_t>(arg) == index) return buffer;
  return std::nullopt;
}

bool ReadsCubeOperands(const Call& call) { return call.is_op_call() && !call.op()->cube_operands.empty(); }

// Whether `call` converts an accumulator: the cube's FIXPIPE narrows an Acc tile on its way out
// (a product cast to BF16 before it feeds another matmul), so no vector core is involved. A cast
// whose result only vector ops read runs on the vector core instead (PlacementPlanner::PlanCast).
bool ConvertsAnAccumulator(const Call& call) {
  if (!IsOp(call, "tile.cast")) return false;
  const auto* tile = call.args()[0]->type()->As<TileType>();
  return tile && tile->memory_space() == MemorySpace::Acc;
}

// Ops that only copy tiles, make views of them or feed the cube: they run on the side that holds
// their tiles. Every other tile op computes on the vector unit and reads Vec tiles.
bool RunsOnAnySide(const Call& call) {
  if (ConvertsAnAccumulator(call) || ReadsCubeOperands(call)) return true;
  static const std::unordered_set<std::string_view> kOps = {
      "tile.load",           "tile.store",          "tile.move",  "tile.reshape", "tile.create",
      "tile.transpose_view", "tile.set_validshape", "tile.slice", "tile.extract", "tile.assemble",
      "tile.aiv_shard",      "tile.reinterpret_view"};
  return !call.is_op_call() || kOps.contains(call.target_name());
}

// "left", "right", "bias", "vec" or "mat": how operands and their moved copies are named by the buffer they go to.
const char* OperandSide(MemorySpace buffer) {
  switch (buffer) {
    case MemorySpace::Left: return "left";
    case MemorySpace::Right: return "right";
    case MemorySpace::Bias: return "bias";
    case MemorySpace::Vec: return "vec";
    default: return "mat";
  }
}

const Call* AsOpCall(const ExprPtr& expr, std::string_view name) {
  const auto* call = expr ? expr->As<Call>() : nullptr;
  return call && IsOp(*call, name) ? call : nullptr;
}

// A load the pass may retarget: no target_memory was written.
bool IsImplicitLoad(const Call* call) {
  return call && IsOp(*call, "tile.load") && !FindAttr<MemorySpace>(call->kwargs(), "target_memory");
}

// What the kernel does with each variable, gathered in one walk.
class UseCollector final : public IRVisitor {
 public:
  std::unordered_map<const Var*, const AssignStmt*> definitions;
  std::vector<const AssignStmt*> assignments;     // in program order
  std::unordered_map<const Var*, int> uses;       // every appearance outside its definition
  std::unordered_map<const Var*, int> cube_uses;  // ... of which as a matmul lhs/rhs
  VarSet vector_reads;                            // read by an op of the vector unit
  std::optional<Diagnostic> error;                // the first vector op reading a cube buffer

  // Read other than as a matmul operand: by vector ops, stores, yields, returns, ...
  bool HasOtherUses(const Var* var) const {
    const auto all = uses.find(var), cube = cube_uses.find(var);
    return (all == uses.end() ? 0 : all->second) > (cube == cube_uses.end() ? 0 : cube->second);
  }

  void VisitStmt(const StmtPtr& stmt) override {
    if (const auto* assign = stmt->As<AssignStmt>()) {
      definitions[assign->var().get()] = assign;
      assignments.push_back(assign);
    }
    IRVisitor::VisitStmt(stmt);
  }

 protected:
  void VisitVar(const std::shared_ptr<const Var>& var) override { ++uses[var.get()]; }

  void VisitCall(const std::shared_ptr<const Call>& call) override {
    const auto& args = call->args();
    for (size_t i = 0; i < args.size(); ++i) {
      const auto* var = args[i]->As<Var>();
      if (!var || !var->type()->As<TileType>()) continue;
      if (OperandBuffer(*call, i)) ++cube_uses[var];
      if (!RunsOnAnySide(*call)) {
        vector_reads.insert(var);
        CheckVectorOperand(*call, *var);
      }
    }
    IRVisitor::VisitCall(call);
  }

 private:
  void CheckVectorOperand(const Call& call, const Var& var) {
    const auto* tile = var.type()->As<TileType>();
    // An Acc tile reaches the vector core by a move (PlacementRewriter::MoveAccumulatorsToVec).
    if (error || tile->memory_space() == MemorySpace::Vec || tile->memory_space() == MemorySpace::Acc) return;
    const auto def = definitions.find(&var);
    const Call* producer = def == definitions.end() ? nullptr : def->second->value()->As<Call>();
    const std::string origin = producer ? fmt::format(", the result of {}", producer->target_name()) : "";
    error = Diagnostic{
        DiagnosticKind::InvalidOperation,
        fmt::format("{} runs on the vector core but reads '{}' from {}{}; only Vec and Acc tiles reach vector "
                    "ops",
                    call.target_name(), var.name_hint(), MemorySpaceName(tile->memory_space()), origin),
        call.span(),
        "load the tile without target_memory, or pl.move it into Vec"};
  }
};

// The decisions of the analysis, applied by PlacementRewriter.
struct Placement {
  std::unordered_map<const Var*, VarPtr> mat_tiles;  // implicit load -> its Mat version
  VarSet twinned;                                    // ... which the kernel keeps loading into Vec too
  VarSet dropped;                                    // unused pl.create_tensor / pl.create_tile results
  VarSet vector_casts;                               // casts of Acc tiles done on the vector core
};

class PlacementPlanner {
 public:
  explicit PlacementPlanner(const UseCollector& uses) : uses_(uses) {}

  Result<Placement> Plan() {
    if (uses_.error) return pypto::unexpected(*uses_.error);
    for (const AssignStmt* assign : uses_.assignments) {
      if (auto ok = PlanDefinition(*assign->var(), *assign); !ok) return pypto::unexpected(ok.error());
    }
    return std::move(placement_);
  }

 private:
  Result<bool> PlanDefinition(const Var& var, const AssignStmt& assign) {
    if (auto ok = CheckWindowWrite(var, assign); !ok) return ok;
    if (const Call* create = AsOpCall(assign.value(), "tensor.create")) return PlanCreatedTensor(var, *create);
    if (const Call* cast = AsOpCall(assign.value(), "tile.cast"); cast && ConvertsAnAccumulator(*cast)) {
      PlanCast(var);
      return true;
    }
    if (AsOpCall(assign.value(), "tile.create") && !uses_.uses.contains(&var)) {
      placement_.dropped.insert(&var);  // a placeholder nobody reads (pl.create_tensor in a kernel, retyped)
      return true;
    }
    if (!uses_.cube_uses.contains(&var)) return true;  // only tiles have cube uses
    const auto* tile = var.type()->As<TileType>();
    if (tile->memory_space() != MemorySpace::Vec) return true;  // Mat gets moves; Left/Right are checked on use
    if (!IsImplicitLoad(assign.value()->As<Call>())) return true;  // refused with its matmul below
    const auto& load = static_cast<const Call&>(*assign.value());
    const bool twin = uses_.HasOtherUses(&var);
    placement_.mat_tiles[&var] =
        std::make_shared<Var>(twin ? var.name_hint() + "_mat" : var.name_hint(),
                              std::make_shared<TileType>(tile->shape(), tile->dtype(), MemorySpace::Mat, std::nullopt,
                                                         tile->valid_shape()),
                              load.span());
    if (twin) placement_.twinned.insert(&var);
    return true;
  }

  // A cast of a product that only vector ops read runs where they do, as upstream's tile.cast (a
  // vector op) does: the product (or its window, a view of it in L0C) crosses to the vector core
  // and is converted there, so the converted copy never takes L0C bytes next to the product.
  void PlanCast(const Var& var) {
    if (uses_.vector_reads.contains(&var) && !uses_.cube_uses.contains(&var)) placement_.vector_casts.insert(&var);
  }

  // `win = tile.slice(t, ...)` copies a window of t. An op that writes into its operand in place
  // (matmul_acc's accumulator, assemble's target) writes into that copy, and only its result shows
  // the write: a result never read means the program expected the write to land in t, as it would
  // if the slice were a view of t. Computing it would silently leave t unchanged. One such window is
  // a view (AllocateMemoryAddr places it in t's block): a window of an Acc matrix that a product
  // accumulates into, as upstream's tile.slice (pto.subview) is the MAD's destination there.
  Result<bool> CheckWindowWrite(const Var& var, const AssignStmt& assign) const {
    static const std::unordered_set<std::string_view> kInPlaceWriters = {"tile.matmul_acc", "tile.gemv_acc",
                                                                          "tile.assemble", "tile.write"};
    const auto* call = assign.value()->As<Call>();
    if (!call || !call->is_op_call() || !kInPlaceWriters.contains(call->target_name()) ||
        !call->op()->result_aliases_arg || uses_.uses.contains(&var))
      return true;
    const auto* target = call->args()[static_cast<size_t>(*call->op()->result_aliases_arg)]->As<Var>();
    const auto def = target ? uses_.definitions.find(target) : uses_.definitions.end();
    const Call* slice = def == uses_.definitions.end() ? nullptr : AsOpCall(def->second->value(), "tile.slice");
    if (!slice || (IsAccumulatedAccWindow(*call, *slice) && uses_.uses.at(target) == 1)) return true;
    const auto* parent = slice->args()[0]->As<Var>();
    const std::string parent_name = parent ? fmt::format("'{}'", parent->name_hint()) : "the sliced tile";
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("{} writes into '{}', a copy of a window of {} made by tile.slice, and its result "
                                 "is never read: the write would not reach {}",
                                 call->target_name(), target->name_hint(), parent_name, parent_name),
                     call->span(),
                     "tile.slice copies the window; compute into a tile of its own and pl.store it at the window's "
                     "offsets (or pl.tile.assemble it back into a Vec or Mat tile)");
  }

  // A product accumulated into a window of an Acc matrix, which is then a view of that tile (when the
  // product alone reads the window, as AllocateMemoryAddr's OnlyAccumulatedInto requires).
  static bool IsAccumulatedAccWindow(const Call& writer, const Call& slice) {
    if (writer.target_name() != "tile.matmul_acc" && writer.target_name() != "tile.gemv_acc") return false;
    const auto* outer = slice.args()[0]->type()->As<TileType>();
    return outer && IsAccWindowViewable(*outer);
  }

  // A tensor made inside a kernel lives in global memory, which the kernel's tiles cannot be
  // allocated from; only a placeholder that is never read can stay (and is dropped).
  Result<bool> PlanCreatedTensor(const Var& var, const Call& create) {
    const auto use = uses_.uses.find(&var);
    if (use == uses_.uses.end() || use->second == 0) {
      placement_.dropped.insert(&var);
      return true;
    }
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("'{}' is a tensor created inside a kernel and then used; a kernel computes on tiles",
                                 var.name_hint()),
                     create.span(),
                     "use pl.create_tile(shape, dtype=...) for scratch space, or create the tensor outside the pl.at "
                     "scope and pass it in");
  }

  const UseCollector& uses_;
  Placement placement_;
};

// Why a matmul operand cannot be placed, or nothing when it can.
std::optional<Diagnostic> UnplaceableOperand(const Call& matmul, const Var& operand, MemorySpace buffer,
                                             const Placement& placement, const UseCollector& uses) {
  const auto space = operand.type()->As<TileType>()->memory_space();
  if (space == buffer || space == MemorySpace::Mat || space == MemorySpace::Acc || space == MemorySpace::Vec ||
      placement.mat_tiles.contains(&operand))
    return std::nullopt;
  const auto def = uses.definitions.find(&operand);
  const Call* producer = def == uses.definitions.end() ? nullptr : def->second->value()->As<Call>();
  std::string origin = producer ? fmt::format(" made by {}", producer->target_name()) : "";
  if (producer && IsOp(*producer, "tile.load")) origin += " with an explicit target_memory";
  return Diagnostic{DiagnosticKind::InvalidOperation,
                    fmt::format("{} reads '{}' as its {} operand, but '{}' is a {} tile{} that cannot be moved to {}",
                                matmul.target_name(), operand.name_hint(), OperandSide(buffer), operand.name_hint(),
                                MemorySpaceName(space), origin, MemorySpaceName(buffer)),
                    matmul.span(),
                    "load the operand with pl.load(..., target_memory=pl.Mem.Mat) or leave target_memory out and "
                    "the compiler places it"};
}

// Rebuilds the kernel body with the planned loads, the moves into L0 and the matmuls reading them.
class PlacementRewriter final : public IRMutator {
 public:
  explicit PlacementRewriter(const Placement& placement) : placement_(placement) {}

  Result<StmtPtr> Rewrite(const StmtPtr& body) {
    auto result = MutateStmt(body);
    if (error_) return pypto::unexpected(*error_);
    return result;
  }

 protected:
  StmtPtr MutateSeq(const std::shared_ptr<const SeqStmts>& seq) override {
    moves_.emplace_back();
    std::vector<StmtPtr> stmts;
    for (const auto& stmt : seq->stmts()) Expand(stmt, stmts);
    moves_.pop_back();
    return std::make_shared<SeqStmts>(std::move(stmts), seq->span());
  }

  // A lone statement (a loop body that is not a sequence) may grow into several.
  StmtPtr MutateAssign(const std::shared_ptr<const AssignStmt>& stmt) override { return ExpandAlone(stmt); }
  StmtPtr MutateEval(const std::shared_ptr<const EvalStmt>& stmt) override { return ExpandAlone(stmt); }

 private:
  using MoveKey = std::pair<const Var*, MemorySpace>;
  struct MoveKeyHash {
    size_t operator()(const MoveKey& key) const {
      return std::hash<const Var*>()(key.first) ^ (static_cast<size_t>(key.second) << 1);
    }
  };
  using MoveScope = std::unordered_map<MoveKey, VarPtr, MoveKeyHash>;

  StmtPtr ExpandAlone(const StmtPtr& stmt) {
    moves_.emplace_back();
    std::vector<StmtPtr> stmts;
    Expand(stmt, stmts);
    moves_.pop_back();
    return stmts.size() == 1 ? stmts[0] : std::make_shared<SeqStmts>(std::move(stmts), stmt->span());
  }

  // Appends what `stmt` becomes to `out`. Only compound statements need a recursive rewrite: no
  // other statement refers to a tile whose definition changes.
  void Expand(const StmtPtr& stmt, std::vector<StmtPtr>& out) {
    if (const auto* assign = stmt->As<AssignStmt>()) {
      const Var* var = assign->var().get();
      if (placement_.dropped.contains(var)) return;
      if (auto mat = placement_.mat_tiles.find(var); mat != placement_.mat_tiles.end()) {
        if (placement_.twinned.contains(var)) out.push_back(stmt);
        out.push_back(LoadIntoMat(*assign, mat->second));
        return;
      }
    }
    if (!stmt->Is<AssignStmt>() && !stmt->Is<EvalStmt>()) return out.push_back(MutateStmt(stmt));
    const StmtPtr renamed = WithRenamedOperands(stmt);
    const auto* call = ValueOf(*renamed)->As<Call>();
    if (call && ReadsCubeOperands(*call)) {
      out.push_back(PlaceOperands(renamed, *call, out));
      return;
    }
    const auto* assign = stmt->As<AssignStmt>();
    const bool vector_cast = assign && placement_.vector_casts.contains(assign->var().get());
    if (call && (vector_cast || !RunsOnAnySide(*call)))
      return out.push_back(MoveAccumulatorsToVec(renamed, *call, out));
    out.push_back(renamed);
  }

  static const ExprPtr& ValueOf(const Stmt& stmt) {
    if (const auto* assign = stmt.As<AssignStmt>()) return assign->value();
    return stmt.As<EvalStmt>()->expr();
  }

  // ---- retyping: a vector op's result read from a Vec copy is a Vec tile ------------------------
  //
  // The frontend types a vector op by its operands, so one reading a product is typed Acc, and so
  // is everything computed from it. Once the op reads the product's copy in Vec, its result is
  // re-deduced as a Vec tile under a new variable, and later statements read that one.

  ExprPtr MutateVar(const std::shared_ptr<const Var>& var) override {
    auto renamed = renames_.find(var.get());
    return renamed == renames_.end() ? var : renamed->second;
  }

  // The statement reading renamed variables, its op call re-deduced when an operand changed.
  StmtPtr WithRenamedOperands(const StmtPtr& stmt) {
    const ExprPtr& value = ValueOf(*stmt);
    const ExprPtr renamed = renames_.empty() ? value : MutateExpr(value);
    if (renamed == value) return stmt;
    const auto* call = renamed->As<Call>();
    const ExprPtr deduced = call && call->is_op_call() ? Rebuild(*call, call->args(), call->kwargs()) : renamed;
    return Rebound(*stmt, deduced);
  }

  // `stmt` with `value`; an assignment whose type changed binds a new variable of that type.
  StmtPtr Rebound(const Stmt& stmt, const ExprPtr& value) {
    const auto* assign = stmt.As<AssignStmt>();
    if (!assign) return std::make_shared<EvalStmt>(value, stmt.span());
    VarPtr var = assign->var();
    if (!value->type()->equals(*var->type())) {
      var = std::make_shared<Var>(var->name_hint(), value->type(), var->span());
      renames_[assign->var().get()] = var;
    }
    return std::make_shared<AssignStmt>(var, value, assign->span());
  }

  // A carried value whose initial value is retyped is carried at the new type.
  StmtPtr MutateFor(const std::shared_ptr<const ForStmt>& loop) override {
    RetypeCarried(*AsLoop(*loop));
    return IRMutator::MutateFor(loop);
  }
  StmtPtr MutateWhile(const std::shared_ptr<const WhileStmt>& loop) override {
    RetypeCarried(*AsLoop(*loop));
    return IRMutator::MutateWhile(loop);
  }
  void RetypeCarried(const LoopView& loop) {
    for (size_t i = 0; i < loop.iter_args.size(); ++i) {
      const auto& iter_arg = loop.iter_args[i];
      const ExprPtr init = MutateExpr(iter_arg.init);
      if (init->type()->equals(*iter_arg.var->type())) continue;
      renames_[iter_arg.var.get()] =
          std::make_shared<Var>(iter_arg.var->name_hint(), init->type(), iter_arg.var->span());
      const auto& result = loop.return_vars[i];
      renames_[result.get()] = std::make_shared<Var>(result->name_hint(), init->type(), result->span());
    }
  }

  // An if's results take the types its branches now yield.
  StmtPtr MutateIf(const std::shared_ptr<const IfStmt>& branch) override {
    auto then_body = MutateStmt(branch->then_body());
    auto else_body = branch->else_body() ? MutateStmt(branch->else_body()) : nullptr;
    const YieldStmt* yield = TrailingYield(then_body);
    for (size_t i = 0; yield && i < branch->return_vars().size(); ++i) {
      const auto& result = branch->return_vars()[i];
      const auto& type = yield->values()[i]->type();
      if (!type->equals(*result->type()))
        renames_[result.get()] = std::make_shared<Var>(result->name_hint(), type, result->span());
    }
    std::vector<VarPtr> results;
    for (const auto& result : branch->return_vars()) results.push_back(As<Var>(MutateVar(result)));
    return std::make_shared<IfStmt>(MutateExpr(branch->condition()), then_body, else_body, std::move(results),
                                    branch->span());
  }

  // A load FlattenTileNdTo2D gave the row-merged tile of its N-d window keeps that tile (in Mat):
  // re-deduced, the op gives the window's own shape.
  StmtPtr LoadIntoMat(const AssignStmt& assign, const VarPtr& mat) {
    const auto& load = static_cast<const Call&>(*assign.value());
    Call::Kwargs kwargs = load.kwargs();
    kwargs.emplace_back("target_memory", MemorySpace::Mat);
    ExprPtr value = Rebuild(load, load.args(), std::move(kwargs));
    const auto* rebuilt = value->As<Call>();
    if (rebuilt && rebuilt->type()->As<TileType>()->shape() != mat->type()->As<TileType>()->shape())
      value = std::make_shared<Call>(rebuilt->op(), rebuilt->args(), rebuilt->kwargs(), mat->type(), rebuilt->span());
    return std::make_shared<AssignStmt>(mat, value, assign.span());
  }

  // The matmul statement reading its operands from Left/Right; moves go into `out` before it.
  StmtPtr PlaceOperands(const StmtPtr& stmt, const Call& call, std::vector<StmtPtr>& out) {
    std::vector<ExprPtr> args = call.args();
    bool changed = false;
    for (size_t i = 0; i < args.size(); ++i) {
      const auto buffer = OperandBuffer(call, i);
      const auto* operand = args[i]->As<Var>();
      if (!buffer || !operand) continue;
      VarPtr source = std::static_pointer_cast<const Var>(args[i]);
      if (auto mat = placement_.mat_tiles.find(operand); mat != placement_.mat_tiles.end()) source = mat->second;
      const MemorySpace space = source->type()->As<TileType>()->memory_space();
      if (space == *buffer) continue;
      // A product feeding another matmul reaches L0 through L1: Acc -> Mat -> Left/Right; so does a
      // tile the vector core computed, crossing over to the cube first.
      if (space == MemorySpace::Acc || space == MemorySpace::Vec)
        source = MoveInto(source, MemorySpace::Mat, call.span(), out);
      args[i] = MoveInto(source, *buffer, call.span(), out);
      changed = true;
    }
    if (!changed) return stmt;
    return Rebound(*stmt, Rebuild(call, std::move(args), call.kwargs()));
  }

  // A vector op reading an Acc tile (a product) reads its copy in Vec instead; the moves go into
  // `out` before it.
  StmtPtr MoveAccumulatorsToVec(const StmtPtr& stmt, const Call& call, std::vector<StmtPtr>& out) {
    std::vector<ExprPtr> args = call.args();
    bool changed = false;
    for (auto& arg : args) {
      const auto* tile = arg->type()->As<TileType>();
      if (!arg->As<Var>() || !tile || tile->memory_space() != MemorySpace::Acc) continue;
      arg = MoveInto(std::static_pointer_cast<const Var>(arg), MemorySpace::Vec, call.span(), out);
      changed = true;
    }
    if (!changed) return stmt;
    return Rebound(*stmt, Rebuild(call, std::move(args), call.kwargs()));
  }

  VarPtr MoveInto(const VarPtr& source, MemorySpace buffer, const Span& span, std::vector<StmtPtr>& out) {
    const MoveKey key{source.get(), buffer};
    for (const auto& scope : moves_)
      if (auto found = scope.find(key); found != scope.end()) return found->second;
    const ExprPtr move = Rebuild("tile.move", {source}, {{"target_memory", buffer}}, span);
    auto moved =
        std::make_shared<Var>(fmt::format("{}_{}", source->name_hint(), OperandSide(buffer)), move->type(), span);
    out.push_back(std::make_shared<AssignStmt>(moved, move, span));
    moves_.back().emplace(key, moved);
    return moved;
  }

  ExprPtr Rebuild(const Call& call, std::vector<ExprPtr> args, Call::Kwargs kwargs) {
    return Rebuild(call.target_name(), std::move(args), std::move(kwargs), call.span());
  }

  // Re-deduces the type; a failure here means the plan broke an op's contract.
  ExprPtr Rebuild(std::string_view op, std::vector<ExprPtr> args, Call::Kwargs kwargs, const Span& span) {
    auto call = OpRegistry::Get().CreateCall(op, std::move(args), std::move(kwargs), span);
    if (call) return *call;
    if (!error_) error_ = call.error();
    return std::make_shared<ConstBool>(false, span);
  }

  const Placement& placement_;
  std::vector<MoveScope> moves_;
  std::unordered_map<const Var*, VarPtr> renames_;  // retyped results, by the variable they replace
  std::optional<Diagnostic> error_;
};

// Checks every matmul operand can be placed, in program order, so the first problem is reported.
class OperandChecker final : public IRVisitor {
 public:
  OperandChecker(const Placement& placement, const UseCollector& uses) : placement_(placement), uses_(uses) {}
  std::optional<Diagnostic> error;

 protected:
  void VisitCall(const std::shared_ptr<const Call>& call) override {
    for (size_t i = 0; i < call->args().size() && !error; ++i) {
      const auto buffer = OperandBuffer(*call, i);
      const auto* operand = call->args()[i]->As<Var>();
      if (buffer && operand) error = UnplaceableOperand(*call, *operand, *buffer, placement_, uses_);
    }
    IRVisitor::VisitCall(call);
  }

 private:
  const Placement& placement_;
  const UseCollector& uses_;
};

Result<FunctionPtr> PlaceKernelTiles(const FunctionPtr& function) {
  if (function->type() != FunctionType::InCore) return function;
  UseCollector uses;
  uses.VisitStmt(function->body());
  auto placement = PlacementPlanner(uses).Plan();
  if (!placement) return pypto::unexpected(placement.error());
  OperandChecker checker(*placement, uses);
  checker.VisitStmt(function->body());
  if (checker.error) return pypto::unexpected(*checker.error);
  auto body = PlacementRewriter(*placement).Rewrite(function->body());
  if (!body) return pypto::unexpected(body.error());
  return function->WithBody(*body);
}

}  // namespace

Pass InferTileMemorySpace() {
  return Pass("InferTileMemorySpace", {IRProperty::NoNestedCalls, IRProperty::NoInCoreScopes},
              {IRProperty::TileMemoryInferred}, {},
              [](const ProgramPtr& program, const PassContext&) -> Result<ProgramPtr> {
                return RewriteEachFunction(program, PlaceKernelTiles);
              });
}

}  // namespace pypto::passes
