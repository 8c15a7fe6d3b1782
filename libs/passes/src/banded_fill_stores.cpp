// A constant fill stored to global memory, too large for its on-chip buffer, is filled and stored
// band by band.
//
// `out[:, 96:512] = pl.full([128, 416], dtype=pl.FP32, value=-inf)` in a kernel is a tile.full of
// 208 KB followed by its store: more than the 184 KB of Ascend910B's UB, so the kernel could not be
// placed at all (upstream's AllocateMemoryAddr refuses it too). Every row of a fill is the same, so
// one band of its rows, filled once, stored at each band's row offset writes the same values: a
// [32, 416] band stored four times. Only a fill larger than its buffer is rewritten, so a kernel
// that fits keeps its instructions as written; a fill read by anything but plain stores (a vector
// op, a store of part of it through `shapes`, an atomic store) stays whole.
#include "banded_fill_stores.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"
#include "index_exprs.h"
#include "sequence_rewriter.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

const Call* OpCall(const ExprPtr& expr, std::string_view name) {
  const auto* call = expr->As<Call>();
  return call && call->is_op_call() && call->target_name() == name ? call : nullptr;
}

// The value a statement computes, if it is an assignment or an evaluated call.
ExprPtr ValueOf(const StmtPtr& stmt) {
  if (const auto* assign = stmt->As<AssignStmt>()) return assign->value();
  if (const auto* eval = stmt->As<EvalStmt>()) return eval->expr();
  return nullptr;
}

// How many times each variable is read in a kernel body.
std::unordered_map<const Var*, int> CountReads(const StmtPtr& body) {
  struct Counter final : IRVisitor {
    std::unordered_map<const Var*, int> reads;
    void VisitVar(const std::shared_ptr<const Var>& var) override { ++reads[var.get()]; }
  } counter;
  counter.VisitStmt(body);
  return std::move(counter.reads);
}

class BandedFillStores final : public SequenceRewriter {
 public:
  BandedFillStores(const SocSpec& soc, std::unordered_map<const Var*, int> reads)
      : soc_(soc), reads_(std::move(reads)) {}

 protected:
  bool RewriteSequence(std::vector<StmtPtr>& stmts) override {
    bool changed = false;
    for (size_t i = 0; i < stmts.size() && !error; ++i) {
      const auto* fill = stmts[i]->As<AssignStmt>();
      if (!fill || !OpCall(fill->value(), "tile.full")) continue;
      const auto stores = PlainStoresOf(*fill->var(), stmts, i + 1);
      const auto band_rows = BandRows(*fill->var()->type()->As<TileType>());
      if (stores.empty() || static_cast<int>(stores.size()) != reads_[fill->var().get()] || !band_rows) continue;
      changed |= Rewrite(stmts, i, stores, *band_rows);
    }
    return changed;
  }

 private:
  // The statements after `from` that store all of `tile` (at offsets written out, with no `shapes`
  // and no atomic mode).
  static std::vector<size_t> PlainStoresOf(const Var& tile, const std::vector<StmtPtr>& stmts, size_t from) {
    std::vector<size_t> stores;
    for (size_t j = from; j < stmts.size(); ++j) {
      auto value = ValueOf(stmts[j]);
      const Call* store = value ? OpCall(value, "tile.store") : nullptr;
      if (!store || store->args().size() != 3 || !store->kwargs().empty() || store->args()[0]->As<Var>() != &tile)
        continue;
      const auto* offsets = store->args()[1]->As<TupleLiteral>();
      if (offsets && offsets->elements().size() >= 2) stores.push_back(j);
    }
    return stores;
  }

  // The rows of the band to fill instead of `tile`: the most rows dividing its own that take at most
  // half of the buffer (the kernel's other tiles need room too); none when the tile fits its buffer.
  std::optional<int64_t> BandRows(const TileType& tile) const {
    const auto& shape = tile.shape();
    const int64_t capacity = soc_.capacity(tile.memory_space());
    if (shape.size() != 2 || tile.num_bytes() <= capacity || !tile.valid_shape().empty()) return std::nullopt;
    const int64_t row_bytes = tile.num_bytes() / shape[0];
    for (int64_t rows = shape[0] - 1; rows >= 1; --rows)
      if (shape[0] % rows == 0 && rows * row_bytes <= capacity / 2) return rows;
    return std::nullopt;
  }

  bool Rewrite(std::vector<StmtPtr>& stmts, size_t at, const std::vector<size_t>& stores, int64_t band_rows) {
    const auto& fill = *stmts[at]->As<AssignStmt>();
    const auto& full = *fill.value()->As<Call>();
    const auto& tile = *fill.var()->type()->As<TileType>();
    const Span& span = fill.span();
    auto band_fill = OpRegistry::Get().CreateCall("tile.full", {IndexTuple({band_rows, tile.shape()[1]}, span),
                                                  full.args()[1]}, full.kwargs(), span);
    if (!band_fill) return Fail(band_fill.error());
    auto band = std::make_shared<Var>(fill.var()->name_hint() + "_band", (*band_fill)->type(), fill.var()->span());
    stmts[at] = std::make_shared<AssignStmt>(band, *band_fill, span);
    // Each store becomes one per band, in order of the rows; a store whose result is named gives it
    // to the last of them.
    std::vector<StmtPtr> rewritten;
    for (size_t k = 0; k < stmts.size(); ++k) {
      if (std::find(stores.begin(), stores.end(), k) == stores.end()) {
        rewritten.push_back(stmts[k]);
        continue;
      }
      const auto& store = *ValueOf(stmts[k])->As<Call>();
      const int64_t bands = tile.shape()[0] / band_rows;
      for (int64_t b = 0; b < bands; ++b) {
        auto offsets = RowsFrom(store.args()[1], b * band_rows, store.span());
        if (!offsets) return Fail(offsets.error());
        auto call = OpRegistry::Get().CreateCall("tile.store", {band, *offsets, store.args()[2]}, {}, store.span());
        if (!call) return Fail(call.error());
        const auto* named = stmts[k]->As<AssignStmt>();
        if (named && b + 1 == bands)
          rewritten.push_back(std::make_shared<AssignStmt>(named->var(), *call, stmts[k]->span()));
        else
          rewritten.push_back(std::make_shared<EvalStmt>(*call, stmts[k]->span()));
      }
    }
    stmts = std::move(rewritten);
    return true;
  }

  // A store's offsets moved down `rows` rows: the tile lands in the tensor's last two dimensions.
  static Result<ExprPtr> RowsFrom(const ExprPtr& offsets, int64_t rows, const Span& span) {
    std::vector<ExprPtr> elements = offsets->As<TupleLiteral>()->elements();
    ExprPtr& row = elements[elements.size() - 2];
    if (rows != 0) {
      if (auto value = AsConstInt(row)) {
        row = IndexConst(*value + rows, span);
      } else {
        auto moved = MakeBinary(BinaryOp::Add, row, IndexConst(rows, span), span);
        if (!moved) return moved;
        row = *moved;
      }
    }
    return ExprPtr(std::make_shared<TupleLiteral>(std::move(elements), span));
  }

  bool Fail(const Diagnostic& diagnostic) {
    if (!error) error = diagnostic;
    return false;
  }

  const SocSpec& soc_;
  std::unordered_map<const Var*, int> reads_;
};

}  // namespace

Result<StmtPtr> FillStoresInBands(const StmtPtr& body, const SocSpec& soc) {
  BandedFillStores rewriter(soc, CountReads(body));
  auto rewritten = rewriter.MutateStmt(body);
  if (rewriter.error) return pypto::unexpected(*rewriter.error);
  return rewritten;
}

}  // namespace pypto::passes
