// The Planner's check of a batch transpose (kernel_planner.h): tile.transpose of the last two axes of
// a [B, R, C] Vec tile, which FlattenTileNdTo2D leaves rank 3 (it has no 2-D form). Its tiles are
// typed as the rows of all their matrices (kernel_plan_batch_tiles.cpp), and the transpose is one
// pto.ttrans per matrix (batch_transpose.cpp).
#include <fmt/format.h>

#include "kernel_planner.h"

namespace pypto::backend_ptoas::detail {

Status Planner::CheckBatchTranspose(const ir::Call& call, const ir::Span& span) {
  const auto& source = *call.args()[0]->type()->As<ir::TileType>();
  if (!IsBatchTranspose(call))
    return Error(span, fmt::format("backend-ptoas cannot lower 'tile.transpose' of {} in kernel '{}': of a rank-3 "
                                   "tile it lowers the transpose of the last two axes only, one pto.ttrans per "
                                   "matrix",
                                   source.str(), kernel_.name()));
  const int64_t element = ir::DataTypeBytes(source.dtype());
  const int64_t rows = source.shape()[1], cols = source.shape()[2];
  if ((rows * element) % 32 != 0 || (cols * element) % 32 != 0)
    return Error(span, fmt::format("backend-ptoas cannot lower 'tile.transpose' of {} in kernel '{}': each matrix "
                                   "and its transpose must have rows of whole 32-byte blocks, as ttrans's tiles do "
                                   "(got {} and {} bytes)",
                                   source.str(), kernel_.name(), cols * element, rows * element));
  // ttrans's tmp, like one matrix of the source.
  return NeedScratch(rows * cols * element, call, span);
}

}  // namespace pypto::backend_ptoas::detail
