// StartingValueFill: FuseCreateAssembleToSlice turns `tmp = pl.create_tensor(..., init_value=v)` into
// a window of another tensor, whose memory holds that tensor's contents, not v. The kernels may
// leave part of tmp unwritten and rely on v there (a row a guard skips), so a fill kernel sets v in
// the window first, as the runtime would have in a fresh tensor. The window can be far bigger than
// UB (a [512, 4, 4096] FP32 block is 8 MiB), so the kernel stores one block of at most
// kBlockBytes per iteration.
#include "starting_value_fill.h"

#include <algorithm>
#include <string>
#include <vector>

#include "index_exprs.h"
#include "pypto/ir/op_registry.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

// The bytes of one filled block: a third of the smallest UB (Ascend910B's 188 KiB), so that the
// kernel fits with room to spare.
constexpr int64_t kBlockBytes = 64 * 1024;

// The largest divisor of `extent` that keeps `extent_bytes_each` times it within `budget` (1 at least).
int64_t LargestDivisorWithin(int64_t extent, int64_t bytes_each, int64_t budget) {
  for (int64_t count = std::min(extent, std::max<int64_t>(budget / bytes_each, 1)); count > 1; --count)
    if (extent % count == 0) return count;
  return 1;
}

ExprPtr FillValue(double value, DataType dtype, const Span& span) {
  if (IsFloat(dtype)) return std::make_shared<ConstFloat>(value, dtype, span);
  return std::make_shared<ConstInt>(static_cast<int64_t>(value), dtype, span);
}

}  // namespace

StmtPtr StartingValueFill(const VarPtr& tensor, double value, const Span& span) {
  const auto& type = *tensor->type()->As<TensorType>();
  const Shape& shape = type.shape();
  const int64_t element = DataTypeBytes(type.dtype());
  const size_t rank = shape.size();
  // The block: `cols` of the last dimension and, when those are all of it, `rows` of the one before.
  const int64_t last = shape[rank - 1];
  const int64_t cols = LargestDivisorWithin(last, element, kBlockBytes);
  const int64_t before = rank >= 2 ? shape[rank - 2] : 1;
  const int64_t rows = cols == last && rank >= 2 ? LargestDivisorWithin(before, cols * element, kBlockBytes) : 1;
  // One loop per dimension the block does not cover whole, outermost first; its variable is the
  // block's offset there.
  std::vector<ExprPtr> offsets;
  struct Loop {
    VarPtr var;
    int64_t extent, step;
  };
  std::vector<Loop> loops;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t block = d + 1 == rank ? cols : d + 2 == rank ? rows : 1;
    if (block == shape[d]) {
      offsets.push_back(IndexConst(0, span));
      continue;
    }
    auto var = std::make_shared<Var>("fill_" + std::to_string(d), std::make_shared<ScalarType>(DataType::INDEX), span);
    offsets.push_back(var);
    loops.push_back(Loop{.var = var, .extent = shape[d], .step = block});
  }
  const auto& registry = OpRegistry::Get();
  auto full = registry.CreateCall("tile.full", {IndexTuple({rows, cols}, span), FillValue(value, type.dtype(), span)},
                                  {{"dtype", OpAttr(type.dtype())}}, span);
  if (!full) return nullptr;
  auto block = std::make_shared<Var>("fill_block", (*full)->type(), span);
  auto store = registry.CreateCall("tile.store", {block, std::make_shared<TupleLiteral>(offsets, span), tensor}, {},
                                   span);
  if (!store) return nullptr;
  StmtPtr body = std::make_shared<SeqStmts>(
      std::vector<StmtPtr>{std::make_shared<AssignStmt>(block, *full, span), std::make_shared<EvalStmt>(*store, span)},
      span);
  for (auto loop = loops.rbegin(); loop != loops.rend(); ++loop)
    body = std::make_shared<ForStmt>(loop->var, IndexConst(0, span), IndexConst(loop->extent, span),
                                     IndexConst(loop->step, span), body, ForKind::Sequential, span);
  return std::make_shared<InCoreScopeStmt>("fill", std::make_shared<SeqStmts>(std::vector<StmtPtr>{body}, span), span);
}

}  // namespace pypto::passes
