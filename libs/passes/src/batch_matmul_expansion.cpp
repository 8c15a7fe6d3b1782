// ExpandBatchMatmuls: one 2-D matmul per batch of a batched matmul. So
//
//   ta = tile.load(a, [0, 0, 0], [2, 16, 32])
//   tb = tile.load(b, [0, 0, 0], [2, 32, 16])
//   tc = tile.matmul(ta, tb)
//   tile.store(tc, [0, 0, 0], c)
//
// becomes
//
//   ta_b0 = tile.load(a, [0, 0, 0], [1, 16, 32]); tb_b0 = tile.load(b, [0, 0, 0], [1, 32, 16])
//   tc_b0 = tile.matmul(ta_b0, tb_b0); tile.store(tc_b0, [0, 0, 0], c)
//   ta_b1 = tile.load(a, [1, 0, 0], [1, 16, 32]); tb_b1 = tile.load(b, [1, 0, 0], [1, 32, 16])
//   tc_b1 = tile.matmul(ta_b1, tb_b1); tile.store(tc_b1, [1, 0, 0], c)
//
// which FlattenTileNdTo2D then merges into 2-D tiles ([1, 16, 32] -> [16, 32]) like any other.
//
// The batch is unrolled, not looped: B is static, and unrolled, each batch's piece of a value is an
// SSA value of its own that every consumer of the value (its stores, a matmul_acc chain) reads by
// batch index, wherever that consumer is in the block; a loop would have to take in all of them.
// Each batch is then a plain load -> matmul -> store chain, the form InferTileMemorySpace (Mat
// loads, moves into Left/Right), AutoTileMatmulL0 and AllocateMemoryAddr take for any 2-D matmul.
//
// An operand with a matrix per batch is loaded per batch from global memory rather than cut out of
// the loaded [B*M, K] tile by rows: such a window (tile.slice) is a copy in the tile's own buffer,
// which the cube reads only after a further move, while a load into Mat feeds the matmul as in any
// 2-D kernel. The whole load goes when nothing else reads it. A batch's load is made right before
// its matmul where nothing in between writes global memory, and otherwise where the whole load was
// (reads of global memory keep their place among the writes); see PlanBatchOrder.
#include "batch_matmul_expansion.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <utility>
#include <unordered_set>

#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"

#include "index_exprs.h"
#include "stmt_patterns.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

using Pieces = std::vector<ExprPtr>;  // a value's piece for each batch index

const TileType* MatrixTile(const Type& type) {
  const auto* tile = type.As<TileType>();
  return tile && tile->shape().size() >= 2 ? tile : nullptr;
}

// The leading (batch) dimensions of a matrix tile; none for a 2-D one.
Shape BatchDims(const TileType& tile) { return Shape(tile.shape().begin(), tile.shape().end() - 2); }

int64_t Count(const Shape& dims) {
  int64_t count = 1;
  for (int64_t extent : dims) count *= extent;
  return count;
}

// The batch without its leading 1s: [1, 2] is the batch [2] (matmul aligns batches at the right).
Shape Significant(const Shape& dims) {
  auto first = std::find_if(dims.begin(), dims.end(), [](int64_t extent) { return extent != 1; });
  return Shape(first, dims.end());
}

// Batch `b` (counted row-major) as an index into each of `dims`.
Shape BatchIndex(int64_t b, const Shape& dims) {
  Shape index(dims.size(), 0);
  for (size_t d = dims.size(); d-- > 0;) {
    index[d] = b % dims[d];
    b /= dims[d];
  }
  return index;
}

// `offset + delta`, folded when the offset is a constant.
Result<ExprPtr> Plus(const ExprPtr& offset, int64_t delta, const Span& span) {
  if (delta == 0) return offset;
  if (auto value = AsConstInt(offset)) return IndexConst(*value + delta, span);
  return MakeBinary(BinaryOp::Add, offset, IndexConst(delta, span), span);
}

// `offsets` moved to batch `index` in their leading dimensions.
Result<ExprPtr> AtBatch(const TupleLiteral& offsets, const Shape& index, const Span& span) {
  std::vector<ExprPtr> elements = offsets.elements();
  for (size_t d = 0; d < index.size(); ++d) {
    auto moved = Plus(elements[d], index[d], span);
    if (!moved) return moved;
    elements[d] = *moved;
  }
  return ExprPtr(std::make_shared<TupleLiteral>(std::move(elements), span));
}

// `extents` with their first `batch_rank` entries 1: one batch's window, shape or valid region.
ExprPtr OneBatch(const TupleLiteral& extents, size_t batch_rank, const Span& span) {
  std::vector<ExprPtr> elements = extents.elements();
  for (size_t d = 0; d < batch_rank; ++d) elements[d] = IndexConst(1, span);
  return std::make_shared<TupleLiteral>(std::move(elements), span);
}

bool IsBatchedMatmul(const Call& call) {
  if (!call.is_op_call() || (call.target_name() != "tile.matmul" && call.target_name() != "tile.matmul_acc"))
    return false;
  const auto* product = MatrixTile(*call.type());
  return product && Count(BatchDims(*product)) > 1;
}

const Call* BatchedMatmulOf(const StmtPtr& stmt) {
  const auto* assign = stmt->As<AssignStmt>();
  const auto* call = assign ? assign->value()->As<Call>() : nullptr;
  return call && IsBatchedMatmul(*call) ? call : nullptr;
}

// A statement's printable kind, for why it has no per-batch form.
std::string Describe(const Stmt& stmt) {
  const ExprPtr* value = nullptr;
  if (const auto* assign = stmt.As<AssignStmt>()) value = &assign->value();
  if (const auto* eval = stmt.As<EvalStmt>()) value = &eval->expr();
  const auto* call = value ? (*value)->As<Call>() : nullptr;
  if (call) return call->is_op_call() ? call->target_name() : fmt::format("the call of '{}'", call->callee());
  if (stmt.Is<ForStmt>() || stmt.Is<WhileStmt>()) return "a loop";
  if (stmt.Is<IfStmt>()) return "an if";
  return "a statement that is no store or matmul_acc";
}

// A loop whose carried value is a batched product (a K loop's accumulator) carries one value per
// batch instead; this is what its body is handed: the per-batch iter_args standing for each split
// one, and which of the yielded values (by position) are split.
struct LoopSplit {
  std::unordered_map<const Var*, Pieces> carried;
  std::vector<bool> yielded;
};

// Expands the batched matmuls of a nested statement's blocks (a loop body, ...); the body of a
// split loop with its LoopSplit.
using Recurse = std::function<StmtPtr(const StmtPtr&, const LoopSplit*)>;

// Expands the batched matmuls of one block (a statement sequence): first plans which values are
// made per batch, checking that every read of them can be, then rewrites the block, nested blocks
// included (through `recurse`).
class BlockExpander {
 public:
  BlockExpander(const std::vector<StmtPtr>& stmts, const std::unordered_map<const Var*, int>& reads,
                const LoopSplit* split, Recurse recurse)
      : stmts_(stmts), reads_(reads), split_(split), recurse_(std::move(recurse)) {
    for (size_t i = 0; i < stmts.size(); ++i)
      if (const auto* assign = stmts[i]->As<AssignStmt>()) defined_at_[assign->var().get()] = i;
    if (split_)
      for (const auto& [var, pieces] : split_->carried) {
        products_.insert(var);
        pieces_[var] = pieces;
      }
  }

  // The rewritten block (the same statements where nothing changed); nullopt when refused.
  std::optional<std::vector<StmtPtr>> Expand() {
    if (!Plan()) return std::nullopt;
    std::vector<StmtPtr> out;
    for (size_t i = 0; i < stmts_.size() && refusal_.empty(); ++i) Rewrite(i, out);
    if (!refusal_.empty()) return std::nullopt;
    return out;
  }

  const std::string& refusal() const { return refusal_; }

 private:
  bool Refuse(std::string why) {
    if (refusal_.empty()) refusal_ = std::move(why);
    return false;
  }

  // ---- planning ----------------------------------------------------------------------------------

  bool Plan() {
    for (size_t i = 0; i < stmts_.size(); ++i) {
      if (const Call* matmul = BatchedMatmulOf(stmts_[i])) {
        if (!PlanMatmul(*matmul, i)) return false;
        products_.insert(stmts_[i]->As<AssignStmt>()->var().get());
        matmuls_.insert(i);
      } else if (const Call* store = OpCallOf(stmts_[i], "tile.store"); store && IsProduct(store->args()[0])) {
        if (!PlanStore(*store, i)) return false;
      } else if (const auto* loop = stmts_[i]->As<ForStmt>(); loop && CarriesAProduct(*loop)) {
        if (!PlanSplitLoop(*loop, i)) return false;
      } else if (const auto* yield = stmts_[i]->As<YieldStmt>(); yield && split_) {
        if (!PlanYield(*yield)) return false;
      } else if (!CheckNoProductRead(stmts_[i])) {
        return false;
      }
    }
    for (const Var* product : products_)
      if (expanded_reads_[product] != Reads(*product))
        return Refuse(fmt::format("the product '{}' of a matmul over a batch is read outside its block",
                                  product->name_hint()));
    DropWholeValues();
    PlanBatchOrder();
    return true;
  }

  int Reads(const Var& var) const {
    auto it = reads_.find(&var);
    return it == reads_.end() ? 0 : it->second;
  }

  bool IsProduct(const ExprPtr& expr) const {
    const auto* var = expr->As<Var>();
    return var && products_.contains(var);
  }

  // Every tile operand of the matmul (lhs, rhs, a matmul_acc's accumulator) with a batch of matrices
  // is made per batch; one matrix for every batch is read whole.
  bool PlanMatmul(const Call& matmul, size_t at) {
    const Shape batch = Significant(BatchDims(*MatrixTile(*matmul.type())));
    for (const auto& arg : matmul.args()) {
      const auto* tile = MatrixTile(*arg->type());
      if (!tile || Count(BatchDims(*tile)) == 1) continue;
      if (Significant(BatchDims(*tile)) != batch)
        return Refuse(fmt::format("{} multiplies a batch of matrices {} broadcast to the batch [{}]",
                                  matmul.target_name(), tile->str(), fmt::join(batch, ", ")));
      const auto* var = arg->As<Var>();
      if (!var)
        return Refuse(fmt::format("{} over a batch reads an operand that is no variable", matmul.target_name()));
      if (!PlanPieces(*var, at, matmul)) return false;
    }
    return true;
  }

  // Whether `var`, read by the statement at `reader`, can be made per batch: a product of an earlier
  // batched matmul, a load, transpose_view or create of this block (remade per batch), or else a
  // Vec or Mat tile computed in the kernel (a vector op's result, a loop's carried value), whose
  // batches are row windows of it (tile.slice).
  bool PlanPieces(const Var& var, size_t reader, const Call& matmul) {
    ++expanded_reads_[&var];
    reader_[&var] = reader;
    if (products_.contains(&var) || per_batch_.contains(&var) || sliced_.contains(&var)) return true;
    auto def = defined_at_.find(&var);
    const Call* call = nullptr;
    if (def != defined_at_.end() && def->second < reader)
      call = stmts_[def->second]->As<AssignStmt>()->value()->As<Call>();
    const std::string op = call && call->is_op_call() ? call->target_name() : "";
    const auto* viewed = op == "tile.transpose_view" ? call->args()[0]->As<Var>() : nullptr;
    if ((op == "tile.load" && LoadHasBatchWindow(*call)) || op == "tile.create" ||
        (viewed && PlanPieces(*viewed, def->second, matmul))) {
      per_batch_.insert(&var);
      return true;
    }
    if (!refusal_.empty()) return false;
    const auto& tile = *var.type()->As<TileType>();
    const bool windowed = tile.memory_space() == MemorySpace::Vec || tile.memory_space() == MemorySpace::Mat;
    if (windowed && !tile.has_partial_valid_shape()) {
      sliced_.insert(&var);
      return true;
    }
    return Refuse(fmt::format("{} over a batch reads '{}' {}, which has no per-batch form", matmul.target_name(),
                              var.name_hint(), tile.str()));
  }

  // A load whose window's leading dimensions are the tile's batch, each valid as a whole.
  static bool LoadHasBatchWindow(const Call& load) {
    const auto& tile = *load.type()->As<TileType>();
    const auto* offsets = load.args()[1]->As<TupleLiteral>();
    if (!offsets || offsets->elements().size() != tile.shape().size()) return false;
    const size_t batch_rank = tile.shape().size() - 2;
    if (load.args().size() > 3) {
      const auto* valid = load.args()[3]->As<TupleLiteral>();
      if (!valid) return false;
      for (size_t d = 0; d < batch_rank; ++d)
        if (AsConstInt(valid->elements()[d]) != tile.shape()[d]) return false;
    }
    return true;
  }

  bool PlanStore(const Call& store, size_t at) {
    const auto& tile = *store.args()[0]->type()->As<TileType>();
    const auto* offsets = store.args()[1]->As<TupleLiteral>();
    if (store.args().size() > 3 || !offsets || offsets->elements().size() != tile.shape().size())
      return Refuse(fmt::format("a store of part of the product '{}' of a matmul over a batch has no per-batch form",
                                store.args()[0]->As<Var>()->name_hint()));
    ++expanded_reads_[store.args()[0]->As<Var>()];
    stores_.insert(at);
    return true;
  }

  bool CarriesAProduct(const ForStmt& loop) const {
    return std::ranges::any_of(loop.iter_args(), [&](const IterArg& arg) { return IsProduct(arg.init); });
  }

  // A loop carrying a product carries its pieces: each such iter_arg becomes one per batch, and so
  // does its return value (a product of this block from then on). The body may read the product
  // only through the iter_arg.
  bool PlanSplitLoop(const ForStmt& loop, size_t at) {
    if (!loop.body()->Is<SeqStmts>())
      return Refuse("a loop carrying the product of a matmul over a batch has no block for its body");
    for (const auto& [var, count] : ReadCounts(loop.body()))
      if (products_.contains(var))
        return Refuse(fmt::format("the product '{}' of a matmul over a batch is read inside a loop",
                                  var->name_hint()));
    for (size_t j = 0; j < loop.iter_args().size(); ++j) {
      if (!IsProduct(loop.iter_args()[j].init)) continue;
      ++expanded_reads_[loop.iter_args()[j].init->As<Var>()];
      products_.insert(loop.return_vars()[j].get());
    }
    split_loops_.insert(at);
    return true;
  }

  // The yield of a split loop's body: each split value is a product of the body (or the carried
  // value itself); any other value must not be one.
  bool PlanYield(const YieldStmt& yield) {
    for (size_t j = 0; j < yield.values().size(); ++j) {
      const bool split = j < split_->yielded.size() && split_->yielded[j];
      const bool product = IsProduct(yield.values()[j]);
      if (split != product)
        return Refuse(fmt::format("a loop yields {} as its carried value {}", product ? "a batched product" : "a value",
                                  split ? "that is a batched product" : "that is no batched product"));
      if (product) ++expanded_reads_[yield.values()[j]->As<Var>()];
    }
    yielded_ = true;
    return true;
  }

  bool CheckNoProductRead(const StmtPtr& stmt) {
    if (products_.empty()) return true;
    for (const auto& [var, count] : ReadCounts(stmt))
      if (products_.contains(var))
        return Refuse(fmt::format("the product '{}' of a matmul over a batch is read by {}, which has no per-batch "
                                  "form",
                                  var->name_hint(), Describe(*stmt)));
    return true;
  }

  // A whole value made per batch stays only where something else reads it too. Later definitions
  // first: a transpose_view that goes stops reading the load it views.
  void DropWholeValues() {
    for (const Var* var : ByLaterDefinition()) {
      if (expanded_reads_[var] == Reads(*var)) {
        dropped_.insert(var);
        continue;
      }
      const auto* call = stmts_[defined_at_[var]]->As<AssignStmt>()->value()->As<Call>();
      if (call->target_name() == "tile.transpose_view") --expanded_reads_[call->args()[0]->As<Var>()];
    }
  }

  std::vector<const Var*> ByLaterDefinition() {
    std::vector<const Var*> vars(per_batch_.begin(), per_batch_.end());
    std::ranges::sort(vars, [&](const Var* x, const Var* y) { return defined_at_[x] > defined_at_[y]; });
    return vars;
  }

  // Whether the statement may write global memory: a store, a call of a function, a loop or an if.
  static bool MayWriteTensors(const StmtPtr& stmt) {
    const ExprPtr* value = nullptr;
    if (const auto* assign = stmt->As<AssignStmt>()) value = &assign->value();
    if (const auto* eval = stmt->As<EvalStmt>()) value = &eval->expr();
    if (!value) return true;
    const auto* call = (*value)->As<Call>();
    return call && (!call->is_op_call() || call->op()->writes_arg.has_value());
  }

  // Batch by batch, where possible: a per-batch value read by one matmul only (through a
  // transpose_view, say) and with no write to global memory between its definition and the matmul
  // is made right before that batch's matmul, and a product whose only read is a store right after
  // its matmul is stored right after each batch's matmul. So each batch's loads die at its matmul
  // and its product at its store, and on-chip memory holds one batch at a time, as it holds one
  // 2-D matmul (split_matmul_batches.h does the same for a batch too large for L1).
  void PlanBatchOrder() {
    for (const Var* var : ByLaterDefinition()) {
      if (!dropped_.contains(var) || expanded_reads_[var] != 1) continue;
      size_t target = reader_[var];
      if (!matmuls_.contains(target)) {
        auto view = sunk_into_.find(stmts_[target]->As<AssignStmt>()->var().get());
        if (view == sunk_into_.end()) continue;
        target = view->second;
      }
      bool written = false;
      for (size_t j = defined_at_[var] + 1; j < target && !written; ++j) written = MayWriteTensors(stmts_[j]);
      if (!written) sunk_into_[var] = target;
    }
    for (size_t at : matmuls_) {
      const Var* product = stmts_[at]->As<AssignStmt>()->var().get();
      const bool next_stores_it = at + 1 < stmts_.size() && stores_.contains(at + 1) &&
                                  OpCallOf(stmts_[at + 1], "tile.store")->args()[0].get() == product;
      if (next_stores_it && Reads(*product) == 1) {
        stored_after_.insert(at);
        stores_.erase(at + 1);
        skipped_.insert(at + 1);
      }
    }
  }

  // ---- rewriting ---------------------------------------------------------------------------------

  void Rewrite(size_t i, std::vector<StmtPtr>& out) {
    const auto* assign = stmts_[i]->As<AssignStmt>();
    if (skipped_.contains(i)) return;
    if (assign && per_batch_.contains(assign->var().get())) {
      const Var* var = assign->var().get();
      if (sunk_into_.contains(var)) return;
      if (!dropped_.contains(var)) out.push_back(stmts_[i]);
      for (int64_t b = 0; b < BatchCount(*var); ++b) MakePiece(*assign, b, out);
      return;
    }
    if (matmuls_.contains(i)) return MultiplyPerBatch(*assign, i, out);
    if (stores_.contains(i)) return StorePerBatch(stmts_[i], std::nullopt, out);
    if (split_loops_.contains(i)) return out.push_back(SplitLoop(*stmts_[i]->As<ForStmt>()));
    if (const auto* yield = stmts_[i]->As<YieldStmt>(); yield && yielded_) {
      std::vector<ExprPtr> values;
      for (const auto& value : yield->values()) {
        auto pieces = IsProduct(value) ? pieces_.find(value->As<Var>()) : pieces_.end();
        if (pieces == pieces_.end()) values.push_back(value);
        else values.insert(values.end(), pieces->second.begin(), pieces->second.end());
      }
      return out.push_back(std::make_shared<YieldStmt>(std::move(values), yield->span()));
    }
    out.push_back(stmts_[i]->Is<AssignStmt>() || stmts_[i]->Is<EvalStmt>() ? stmts_[i] : recurse_(stmts_[i], nullptr));
  }

  // The loop with one iter_arg (and return value) per batch for each carried product, its body
  // expanded with them.
  StmtPtr SplitLoop(const ForStmt& loop) {
    LoopSplit split;
    std::vector<IterArg> iter_args;
    std::vector<VarPtr> returned;
    for (size_t j = 0; j < loop.iter_args().size(); ++j) {
      const IterArg& arg = loop.iter_args()[j];
      const VarPtr& result = loop.return_vars()[j];
      split.yielded.push_back(IsProduct(arg.init));
      if (!split.yielded.back()) {
        iter_args.push_back(arg);
        returned.push_back(result);
        continue;
      }
      const Pieces& inits = pieces_.at(arg.init->As<Var>());
      for (size_t b = 0; b < inits.size(); ++b) {
        const TypePtr& type = inits[b]->type();
        auto carried = std::make_shared<Var>(fmt::format("{}_b{}", arg.var->name_hint(), b), type, arg.var->span());
        auto after = std::make_shared<Var>(fmt::format("{}_b{}", result->name_hint(), b), type, result->span());
        iter_args.push_back(IterArg{carried, inits[b], arg.carry});
        returned.push_back(after);
        split.carried[arg.var.get()].push_back(carried);
        pieces_[result.get()].push_back(after);
      }
    }
    StmtPtr body = recurse_(loop.body(), &split);
    return std::make_shared<ForStmt>(loop.loop_var(), loop.start(), loop.stop(), loop.step(), std::move(iter_args),
                                     std::move(body), std::move(returned), loop.kind(), loop.span());
  }

  static int64_t BatchCount(const Var& var) { return Count(BatchDims(*var.type()->As<TileType>())); }

  // The matmul at `at`, one batch after another: the batch's operands made here, its matmul, and
  // its store where that follows.
  void MultiplyPerBatch(const AssignStmt& assign, size_t at, std::vector<StmtPtr>& out) {
    for (int64_t b = 0; b < BatchCount(*assign.var()) && refusal_.empty(); ++b) {
      for (const auto& arg : assign.value()->As<Call>()->args()) MakeSunkPiece(arg, b, out);
      MakePiece(assign, b, out);
      if (stored_after_.contains(at)) StorePerBatch(stmts_[at + 1], b, out);
    }
  }

  // The piece `b` of an operand made at its matmul (and of what it views), unless made already.
  void MakeSunkPiece(const ExprPtr& expr, int64_t b, std::vector<StmtPtr>& out) {
    const auto* var = expr->As<Var>();
    if (var && sliced_.contains(var)) return SliceBatch(std::static_pointer_cast<const Var>(expr), b, out);
    if (!var || !sunk_into_.contains(var)) return;
    auto made = pieces_.find(var);
    if (made != pieces_.end() && static_cast<int64_t>(made->second.size()) > b) return;
    const auto& assign = *stmts_[defined_at_[var]]->As<AssignStmt>();
    for (const auto& arg : assign.value()->As<Call>()->args()) MakeSunkPiece(arg, b, out);
    MakePiece(assign, b, out);
  }

  // `<name>_b<b> = op(...)`: the op defining `assign` on batch b's window, shape or operands.
  void MakePiece(const AssignStmt& assign, int64_t b, std::vector<StmtPtr>& out) {
    const auto& call = *assign.value()->As<Call>();
    const Span& span = call.span();
    const Shape batch = BatchDims(*assign.var()->type()->As<TileType>());
    std::vector<ExprPtr> args = call.args();
    if (call.target_name() == "tile.load") {
      auto offsets = AtBatch(*args[1]->As<TupleLiteral>(), BatchIndex(b, batch), span);
      if (!offsets) return (void)Refuse(offsets.error().message);
      args[1] = *offsets;
      for (size_t j = 2; j < args.size(); ++j) args[j] = OneBatch(*args[j]->As<TupleLiteral>(), batch.size(), span);
    } else if (call.target_name() == "tile.create") {
      args[0] = OneBatch(*args[0]->As<TupleLiteral>(), batch.size(), span);
    } else {
      for (auto& arg : args) {
        if (arg->As<Var>() && sliced_.contains(arg->As<Var>()))
          SliceBatch(std::static_pointer_cast<const Var>(arg), b, out);
        if (auto it = pieces_.find(arg->As<Var>()); arg->As<Var>() && it != pieces_.end()) arg = it->second[b];
      }
    }
    auto piece = OpRegistry::Get().CreateCall(call.target_name(), std::move(args), call.kwargs(), span);
    if (!piece) return (void)Refuse(fmt::format("{} of one batch: {}", call.target_name(), piece.error().message));
    auto var = std::make_shared<Var>(fmt::format("{}_b{}", assign.var()->name_hint(), b), (*piece)->type(),
                                     assign.var()->span());
    out.push_back(std::make_shared<AssignStmt>(var, *piece, assign.span()));
    pieces_[assign.var().get()].push_back(var);
  }

  // `<name>_b<b> = tile.slice(var, [1, .., M, K], [b's index, 0, 0])`, unless made already: batch b's
  // rows of a tile computed in the kernel.
  void SliceBatch(const VarPtr& var, int64_t b, std::vector<StmtPtr>& out) {
    Pieces& pieces = pieces_[var.get()];
    if (static_cast<int64_t>(pieces.size()) > b) return;
    const Span& span = var->span();
    const auto& tile = *var->type()->As<TileType>();
    const Shape batch = BatchDims(tile);
    Shape window = tile.shape(), origin = BatchIndex(b, batch);
    std::fill_n(window.begin(), batch.size(), 1);
    origin.resize(window.size(), 0);
    auto slice = OpRegistry::Get().CreateCall("tile.slice", {var, IndexTuple(window, span), IndexTuple(origin, span)},
                                              {}, span);
    if (!slice) return (void)Refuse(fmt::format("tile.slice of one batch: {}", slice.error().message));
    auto piece = std::make_shared<Var>(fmt::format("{}_b{}", var->name_hint(), b), (*slice)->type(), span);
    out.push_back(std::make_shared<AssignStmt>(piece, *slice, span));
    pieces.push_back(piece);
  }

  // A store of a product, per batch at the batch's offsets (only batch `only` when given). A bound
  // result (`r = tile.store(...)`, the tensor written) is the last batch's.
  void StorePerBatch(const StmtPtr& stmt, std::optional<int64_t> only, std::vector<StmtPtr>& out) {
    const auto& store = *OpCallOf(stmt, "tile.store");
    const Pieces& pieces = pieces_.at(store.args()[0]->As<Var>());
    const Shape batch = BatchDims(*store.args()[0]->type()->As<TileType>());
    for (int64_t b = only.value_or(0); b < (only ? *only + 1 : Count(batch)); ++b) {
      std::vector<ExprPtr> args = store.args();
      args[0] = pieces[b];
      auto offsets = AtBatch(*args[1]->As<TupleLiteral>(), BatchIndex(b, batch), store.span());
      if (!offsets) return (void)Refuse(offsets.error().message);
      args[1] = *offsets;
      auto call = OpRegistry::Get().CreateCall("tile.store", std::move(args), store.kwargs(), store.span());
      if (!call) return (void)Refuse(fmt::format("tile.store of one batch: {}", call.error().message));
      const auto* bound = stmt->As<AssignStmt>();
      if (bound && b + 1 == Count(batch))
        out.push_back(std::make_shared<AssignStmt>(bound->var(), *call, stmt->span()));
      else
        out.push_back(std::make_shared<EvalStmt>(*call, stmt->span()));
    }
  }

  const std::vector<StmtPtr>& stmts_;
  const std::unordered_map<const Var*, int>& reads_;
  std::unordered_map<const Var*, size_t> defined_at_;
  std::unordered_set<size_t> matmuls_, stores_;      // statements rewritten per batch
  std::unordered_set<const Var*> products_;          // results of batched matmuls
  std::unordered_set<const Var*> per_batch_;         // loads, views and creates made per batch
  std::unordered_set<const Var*> dropped_;           // ... whose whole value nothing else reads
  std::unordered_set<const Var*> sliced_;            // tiles computed in the kernel, sliced per batch
  std::unordered_map<const Var*, int> expanded_reads_;  // reads replaced by reads of pieces
  std::unordered_map<const Var*, size_t> reader_;      // ... the statement reading one (the last)
  std::unordered_map<const Var*, size_t> sunk_into_;   // ... made batch by batch at this matmul
  std::unordered_set<size_t> stored_after_;            // matmuls whose store follows each batch
  std::unordered_set<size_t> skipped_;                 // ... those stores
  std::unordered_map<const Var*, Pieces> pieces_;
  std::unordered_set<size_t> split_loops_;             // loops carrying a product, one value per batch
  bool yielded_ = false;                               // the block's yield passes pieces on
  const LoopSplit* split_;                             // what the enclosing split loop carries
  Recurse recurse_;
  std::string refusal_;
};

class BatchExpander final : public IRMutator {
 public:
  explicit BatchExpander(const StmtPtr& body) : reads_(ReadCounts(body)) {}

  const std::string& refusal() const { return refusal_; }

 protected:
  // Top-down: a block decides whether a loop in it carries per-batch values before its body is
  // expanded.
  StmtPtr MutateSeq(const std::shared_ptr<const SeqStmts>& seq) override {
    const LoopSplit* split = std::exchange(split_, nullptr);
    if (!refusal_.empty()) return seq;
    BlockExpander block(seq->stmts(), reads_, split, [this](const StmtPtr& stmt, const LoopSplit* inner) {
      split_ = inner;
      StmtPtr mutated = MutateStmt(stmt);
      split_ = nullptr;
      return mutated;
    });
    auto stmts = block.Expand();
    if (!stmts) {
      if (refusal_.empty()) refusal_ = block.refusal();
      return seq;
    }
    if (*stmts == seq->stmts()) return seq;
    return std::make_shared<SeqStmts>(std::move(*stmts), seq->span());
  }

 private:
  const LoopSplit* split_ = nullptr;  // for the next block: the body of a split loop
  std::unordered_map<const Var*, int> reads_;
  std::string refusal_;
};

}  // namespace

pypto::expected<StmtPtr, std::string> ExpandBatchMatmuls(const StmtPtr& body) {
  BatchExpander expander(body);
  StmtPtr expanded = expander.MutateStmt(body);
  if (!expander.refusal().empty()) return pypto::unexpected(expander.refusal());
  return expanded;
}

}  // namespace pypto::passes
