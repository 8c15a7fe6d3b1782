// SplitOversizedBatchMatmuls: one batch of a large batched matmul at a time. So
//
//   a = tile.load(x, [r, 0, 0], [B, M, K], target_memory=Mat); a_l = tile.move(a, Left)
//   b = tile.load(y, [s, 0, 0], [B, N, K], target_memory=Mat); b_r = tile.move(b, Right)
//   c = tile.matmul(a_l, b_r, b_trans=True)
//   out = tile.store(c, [t, 0, 0], z)
//
// becomes
//
//   for c_bi in range(B):
//     a = tile.load(x, [r + c_bi, 0, 0], [1, M, K], target_memory=Mat); a_l = tile.move(a, Left)
//     b = tile.load(y, [s + c_bi, 0, 0], [1, N, K], target_memory=Mat); b_r = tile.move(b, Right)
//     c = tile.matmul(a_l, b_r, b_trans=True)
//     tile.store(c, [t + c_bi, 0, 0], z)
//
// with later reads of `out` reading `z`. An operand that is one matrix for every batch (2-D, or a
// batch of 1) keeps its load before the loop and is moved into L0 in each iteration.
#include "split_matmul_batches.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"

#include "index_exprs.h"
#include "stmt_patterns.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

// `origin + delta`, written `delta` when the origin is 0.
Result<ExprPtr> Plus(const ExprPtr& origin, const ExprPtr& delta, const Span& span) {
  if (AsConstInt(origin) == 0) return delta;
  return MakeBinary(BinaryOp::Add, origin, delta, span);
}

// One operand of the batched matmul: the Mat tile moved into L0, and its load when the operand has a
// matrix per batch (the load is then made per batch).
struct BatchOperand {
  size_t move;                 // statement index of the tile.move into L0
  VarPtr moved;                // what the matmul reads
  VarPtr mat;                  // the Mat tile moved
  std::optional<size_t> load;  // statement index of the Mat tile's load, when per batch
};

struct BatchSplit {
  BatchOperand lhs, rhs;
  size_t matmul;
  VarPtr product;
  std::vector<size_t> stores;  // ascending; every read of the product
  int64_t batches;

  bool Replaces(size_t index) const {
    return index == lhs.move || index == rhs.move || index == lhs.load || index == rhs.load || index == matmul ||
           std::ranges::find(stores, index) != stores.end();
  }
};

class BatchSplitter final : public IRMutator {
 public:
  BatchSplitter(const SocSpec& soc, std::unordered_map<const Var*, int> reads)
      : soc_(soc), reads_(std::move(reads)) {}

  std::optional<Diagnostic> error;

 protected:
  StmtPtr MutateSeq(const std::shared_ptr<const SeqStmts>& seq) override {
    StmtPtr mutated = IRMutator::MutateSeq(seq);
    const auto* current = mutated->As<SeqStmts>();
    if (!current || error) return mutated;
    std::vector<StmtPtr> stmts = current->stmts();
    bool changed = false;
    while (auto split = FirstPlan(stmts)) {
      auto rewritten = Rewrite(*split, stmts);
      if (!rewritten) {
        error = rewritten.error();
        return mutated;
      }
      stmts = std::move(*rewritten);
      changed = true;
    }
    if (!changed) return mutated;
    StmtPtr result = std::make_shared<SeqStmts>(std::move(stmts), seq->span());
    return stored_tensors_.empty() ? result : SubstituteVars(result, stored_tensors_);
  }

 private:
  int Reads(const Var& var) const {
    auto it = reads_.find(&var);
    return it == reads_.end() ? 0 : it->second;
  }

  static const AssignStmt* Definition(const std::vector<StmtPtr>& stmts, const Var& var, size_t before, size_t* at) {
    for (size_t j = 0; j < before; ++j) {
      const auto* assign = stmts[j]->As<AssignStmt>();
      if (assign && assign->var().get() == &var) {
        *at = j;
        return assign;
      }
    }
    return nullptr;
  }

  // The operand `arg` of the matmul at statement `i`: moved from a Mat tile only for this matmul.
  std::optional<BatchOperand> FindOperand(const std::vector<StmtPtr>& stmts, const ExprPtr& arg, size_t i,
                                          int64_t batches) const {
    const auto* moved = arg->As<Var>();
    size_t move_at = 0, load_at = 0;
    const AssignStmt* move = moved ? Definition(stmts, *moved, i, &move_at) : nullptr;
    if (!move || !OpCallOf(stmts[move_at], "tile.move") || Reads(*moved) != 1) return std::nullopt;
    auto mat = std::dynamic_pointer_cast<const Var>(move->value()->As<Call>()->args()[0]);
    const auto* tile = mat ? mat->type()->As<TileType>() : nullptr;
    if (!tile || tile->memory_space() != MemorySpace::Mat || tile->shape().size() > 3) return std::nullopt;
    BatchOperand operand{move_at, move->var(), mat, std::nullopt};
    if (tile->shape().size() == 2 || tile->shape()[0] == 1) return operand;  // one matrix for every batch
    if (tile->shape()[0] != batches || tile->has_partial_valid_shape() || Reads(*mat) != 1) return std::nullopt;
    const AssignStmt* load = Definition(stmts, *mat, move_at, &load_at);
    const Call* call = load ? OpCallOf(stmts[load_at], "tile.load") : nullptr;
    if (!call || call->args().size() != 3 || !call->args()[1]->As<TupleLiteral>()) return std::nullopt;
    operand.load = load_at;
    return operand;
  }

  std::optional<BatchSplit> FirstPlan(const std::vector<StmtPtr>& stmts) const {
    for (size_t i = 0; i < stmts.size(); ++i)
      if (auto split = Plan(stmts, i)) return split;
    return std::nullopt;
  }

  // Statement `i` as a batched matmul to split: too large for L0, its product read only by stores.
  std::optional<BatchSplit> Plan(const std::vector<StmtPtr>& stmts, size_t i) const {
    const Call* matmul = OpCallOf(stmts[i], "tile.matmul");
    const auto* assign = stmts[i]->As<AssignStmt>();
    if (!matmul || !assign || matmul->args().size() != 2) return std::nullopt;
    const auto& product = *assign->var()->type()->As<TileType>();
    if (product.shape().size() != 3 || product.shape()[0] == 1) return std::nullopt;
    const int64_t batches = product.shape()[0];
    auto lhs = FindOperand(stmts, matmul->args()[0], i, batches);
    auto rhs = FindOperand(stmts, matmul->args()[1], i, batches);
    if (!lhs || !rhs || (!lhs->load && !rhs->load)) return std::nullopt;
    const auto& lhs_mat = *lhs->mat->type()->As<TileType>();
    const auto& rhs_mat = *rhs->mat->type()->As<TileType>();
    if (lhs_mat.num_bytes() <= soc_.capacity(MemorySpace::Left) &&
        rhs_mat.num_bytes() <= soc_.capacity(MemorySpace::Right) &&
        product.num_bytes() <= soc_.capacity(MemorySpace::Acc))
      return std::nullopt;
    BatchSplit split{*lhs, *rhs, i, assign->var(), {}, batches};
    for (size_t j = i + 1; j < stmts.size(); ++j) {
      const Call* store = OpCallOf(stmts[j], "tile.store");
      if (!store || store->args()[0].get() != split.product.get()) continue;
      const auto* offsets = store->args()[1]->As<TupleLiteral>();
      if (store->args().size() != 3 || !offsets || offsets->elements().size() != 3) return std::nullopt;
      if (stmts[j]->Is<AssignStmt>() && !store->args()[2]->As<Var>()) return std::nullopt;
      split.stores.push_back(j);
    }
    if (split.stores.empty() || static_cast<int>(split.stores.size()) != Reads(*split.product)) return std::nullopt;
    return split;
  }

  Result<std::vector<StmtPtr>> Rewrite(const BatchSplit& split, const std::vector<StmtPtr>& stmts) {
    auto loop = BatchLoop(split, stmts);
    if (!loop) return pypto::unexpected(loop.error());
    std::vector<StmtPtr> rewritten;
    for (size_t j = 0; j < stmts.size(); ++j) {
      if (j == split.stores.front()) rewritten.push_back(*loop);
      if (!split.Replaces(j)) rewritten.push_back(stmts[j]);
    }
    return rewritten;
  }

  // `for <product>_bi in range(B)` over one batch's loads, moves, matmul and stores.
  Result<StmtPtr> BatchLoop(const BatchSplit& split, const std::vector<StmtPtr>& stmts) {
    const Span& span = stmts[split.matmul]->span();
    auto bi = std::make_shared<Var>(fmt::format("{}_bi", split.product->name_hint()),
                                    std::make_shared<ScalarType>(DataType::INDEX), span);
    std::vector<StmtPtr> body;
    auto lhs = OneBatch(split.lhs, stmts, bi, body);
    if (!lhs) return pypto::unexpected(lhs.error());
    auto rhs = OneBatch(split.rhs, stmts, bi, body);
    if (!rhs) return pypto::unexpected(rhs.error());
    const auto& matmul = *stmts[split.matmul]->As<AssignStmt>()->value()->As<Call>();
    auto product = Bind(split.product->name_hint(), "tile.matmul", {*lhs, *rhs}, matmul.kwargs(), span, body);
    if (!product) return pypto::unexpected(product.error());
    for (size_t index : split.stores) {
      const auto& store = *OpCallOf(stmts[index], "tile.store");
      std::vector<ExprPtr> args = store.args();
      args[0] = *product;
      auto offsets = AtBatch(*args[1]->As<TupleLiteral>(), bi, store.span());
      if (!offsets) return pypto::unexpected(offsets.error());
      args[1] = *offsets;
      auto call = OpRegistry::Get().CreateCall("tile.store", std::move(args), store.kwargs(), store.span());
      if (!call) return pypto::unexpected(call.error());
      body.push_back(std::make_shared<EvalStmt>(*call, store.span()));
      if (const auto* bound = stmts[index]->As<AssignStmt>())
        stored_tensors_[bound->var().get()] = std::static_pointer_cast<const Var>(store.args()[2]);
    }
    return StmtPtr(std::make_shared<ForStmt>(bi, IndexConst(0, span), IndexConst(split.batches, span),
                                             IndexConst(1, span), std::make_shared<SeqStmts>(std::move(body), span),
                                             ForKind::Sequential, span));
  }

  // The operand of batch `bi` moved into L0: its own load when it has one matrix per batch.
  Result<VarPtr> OneBatch(const BatchOperand& operand, const std::vector<StmtPtr>& stmts, const VarPtr& bi,
                          std::vector<StmtPtr>& body) {
    VarPtr source = operand.mat;
    if (operand.load) {
      const auto& load = *OpCallOf(stmts[*operand.load], "tile.load");
      auto offsets = AtBatch(*load.args()[1]->As<TupleLiteral>(), bi, load.span());
      if (!offsets) return pypto::unexpected(offsets.error());
      Shape shape = operand.mat->type()->As<TileType>()->shape();
      shape[0] = 1;
      auto loaded = Bind(operand.mat->name_hint(), "tile.load",
                         {load.args()[0], *offsets, IndexTuple(shape, load.span())}, load.kwargs(), load.span(), body);
      if (!loaded) return loaded;
      source = *loaded;
    }
    const auto& move = *OpCallOf(stmts[operand.move], "tile.move");
    return Bind(operand.moved->name_hint(), "tile.move", {source}, move.kwargs(), move.span(), body);
  }

  // `offsets` moved `bi` batches down the leading dimension.
  static Result<ExprPtr> AtBatch(const TupleLiteral& offsets, const VarPtr& bi, const Span& span) {
    std::vector<ExprPtr> elements = offsets.elements();
    auto first = Plus(elements[0], bi, span);
    if (!first) return first;
    elements[0] = *first;
    return ExprPtr(std::make_shared<TupleLiteral>(std::move(elements), span));
  }

  // `name = op(args, kwargs)` appended to `body`.
  static Result<VarPtr> Bind(const std::string& name, std::string_view op, std::vector<ExprPtr> args,
                             Call::Kwargs kwargs, const Span& span, std::vector<StmtPtr>& body) {
    auto call = OpRegistry::Get().CreateCall(op, std::move(args), std::move(kwargs), span);
    if (!call) return pypto::unexpected(call.error());
    auto var = std::make_shared<Var>(name, (*call)->type(), span);
    body.push_back(std::make_shared<AssignStmt>(var, *call, span));
    return VarPtr(var);
  }

  const SocSpec& soc_;
  std::unordered_map<const Var*, int> reads_;
  std::unordered_map<const Var*, VarPtr> stored_tensors_;  // a bound store's result -> the tensor stored to
};

}  // namespace

Result<StmtPtr> SplitOversizedBatchMatmuls(const StmtPtr& kernel_body, const SocSpec& soc) {
  BatchSplitter splitter(soc, ReadCounts(kernel_body));
  StmtPtr body = splitter.MutateStmt(kernel_body);
  if (splitter.error) return pypto::unexpected(*splitter.error);
  return body;
}

}  // namespace pypto::passes
