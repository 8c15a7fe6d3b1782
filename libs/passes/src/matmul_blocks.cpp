#include "matmul_blocks.h"

#include <algorithm>
#include <tuple>

#include "pypto/ir/op_registry.h"

namespace pypto::passes {

using namespace pypto::ir;

std::vector<int64_t> BlockExtents(int64_t full) {
  std::vector<int64_t> extents{full};
  for (int64_t extent = full - 1; extent >= kFractal; --extent)
    if (extent % kFractal == 0 && full % extent == 0) extents.push_back(extent);
  return extents;
}

std::optional<ResultBlock> ChooseResultBlock(int64_t M, int64_t N, int64_t elem_bytes, int64_t budget, int64_t max_n,
                                             const std::function<bool(const ResultBlock&)>& usable) {
  std::optional<ResultBlock> best;
  // Most elements first, then the larger short edge, then more rows.
  auto rank = [](const ResultBlock& b) { return std::make_tuple(b.m * b.n, std::min(b.m, b.n), b.m); };
  for (int64_t m : BlockExtents(M)) {
    for (int64_t n : BlockExtents(N)) {
      if (n > max_n || m * n * elem_bytes > budget) continue;
      const ResultBlock block{m, n};
      if (usable && !usable(block)) continue;
      if (!best || rank(block) > rank(*best)) best = block;
    }
  }
  return best;
}

Result<ExprPtr> Plus(const ExprPtr& origin, const ExprPtr& delta, const Span& span) {
  if (AsConstInt(origin) == 0) return delta;
  if (AsConstInt(delta) == 0) return origin;
  return MakeBinary(BinaryOp::Add, origin, delta, span);
}

Result<StmtPtr> BlockStore(const Call& store, const VarPtr& block, const ExprPtr& mi, const ExprPtr& ni) {
  const auto& origin = store.args()[1]->As<TupleLiteral>()->elements();
  std::vector<ExprPtr> offsets(origin.begin(), origin.end());
  const size_t rows = offsets.size() - 2, cols = offsets.size() - 1;
  auto row = Plus(offsets[rows], mi, store.span());
  if (!row) return pypto::unexpected(row.error());
  auto col = Plus(offsets[cols], ni, store.span());
  if (!col) return pypto::unexpected(col.error());
  offsets[rows] = *row;
  offsets[cols] = *col;
  std::vector<ExprPtr> args = store.args();
  args[0] = block;
  args[1] = std::make_shared<TupleLiteral>(std::move(offsets), store.span());
  auto call = OpRegistry::Get().CreateCall("tile.store", std::move(args), store.kwargs(), store.span());
  if (!call) return pypto::unexpected(call.error());
  return StmtPtr(std::make_shared<EvalStmt>(*call, store.span()));
}

}  // namespace pypto::passes
