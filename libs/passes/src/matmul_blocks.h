// How the matmul tiling passes cut a product into blocks the cube's L0 buffers hold, and how they
// store a block where the whole product was stored.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "pypto/ir/diagnostic.h"
#include "pypto/ir/expr.h"
#include "pypto/ir/stmt.h"

namespace pypto::passes {

// The cube works on 16 x 16 fractals: a block edge is a multiple of 16 (or a whole extent).
inline constexpr int64_t kFractal = 16;

// The extents a block may take along an axis of `full` elements, largest first: the whole axis,
// then each multiple of 16 dividing it. A divisor leaves no partial block at the axis's end, so
// [272, 144] is cut as 272 = 17 x 16 and 144 = 3 x 48 rather than into halves it has not.
std::vector<int64_t> BlockExtents(int64_t full);

struct ResultBlock {
  int64_t m, n;
};

// The [m, n] block of an [M, N] product with the most elements such that m * n * elem_bytes fits
// `budget`, n is at most `max_n` (the columns a bias window may have) and `usable` accepts it (its
// operand windows fit L0A and L0B); of two as large, the squarer one (fewer L0 reloads of each
// operand). nullopt when none is.
std::optional<ResultBlock> ChooseResultBlock(int64_t M, int64_t N, int64_t elem_bytes, int64_t budget, int64_t max_n,
                                             const std::function<bool(const ResultBlock&)>& usable = nullptr);

// `origin + delta`, written `delta` when the origin is 0.
ir::Result<ir::ExprPtr> Plus(const ir::ExprPtr& origin, const ir::ExprPtr& delta, const ir::Span& span);

// `store` (a `tile.store(whole, offsets, tensor)` of a whole product) for the block `block` at
// (mi, ni) of it: the same store at the offsets shifted by (mi, ni) along the matrix axes.
ir::Result<ir::StmtPtr> BlockStore(const ir::Call& store, const ir::VarPtr& block, const ir::ExprPtr& mi,
                                   const ir::ExprPtr& ni);

}  // namespace pypto::passes
