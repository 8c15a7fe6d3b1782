#include "kernels/arg_reduce.h"

#include <cmath>
#include <vector>

namespace pypto::sim {
namespace {

// Whether `x` replaces `best` as the extremum seen so far: strictly beyond it (so the first of
// equals stays), or the first NaN.
bool Replaces(ArgReduceOp op, float x, float best) {
  if (std::isnan(best)) return false;
  if (std::isnan(x)) return true;
  return op == ArgReduceOp::Max ? x > best : x < best;
}

}  // namespace

void RowArgReduceF32(ArgReduceOp op, int32_t* dst, const float* src, size_t stride, size_t rows, size_t cols) {
  for (size_t r = 0; r < rows; ++r) {
    const float* row = src + r * stride;
    size_t at = 0;
    for (size_t c = 1; c < cols; ++c)
      if (Replaces(op, row[c], row[at])) at = c;
    dst[r] = static_cast<int32_t>(at);
  }
}

// Row by row, keeping each column's best so far: the tile is read in memory order.
void ColArgReduceF32(ArgReduceOp op, int32_t* dst, const float* src, size_t stride, size_t rows, size_t cols) {
  std::vector<float> best(src, src + cols);
  for (size_t c = 0; c < cols; ++c) dst[c] = 0;
  for (size_t r = 1; r < rows; ++r) {
    const float* row = src + r * stride;
    for (size_t c = 0; c < cols; ++c) {
      if (!Replaces(op, row[c], best[c])) continue;
      best[c] = row[c];
      dst[c] = static_cast<int32_t>(r);
    }
  }
}

}  // namespace pypto::sim
