// Broadcasts of a per-row or per-column vector over a tile, and fills. The expand ops are
// row-at-a-time calls of the element-wise kernels; exp(src - vec) has its own vector loop (compiled
// once per Highway target), since no element-wise kernel fuses the subtraction into the exponential,
// and so do fills: GCC at -O2 leaves std::fill_n of a float a scalar store loop, which made
// tile.full the hottest kernel of attention loops that refill a tile every iteration.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/broadcast.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <hwy/contrib/algo/copy-inl.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "kernels/broadcast.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace pypto::sim {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void RowExpDifKernel(float* dst, const float* src, const float* row_vec, size_t rows, size_t cols) {
  const hn::ScalableTag<float> d;
  for (size_t r = 0; r < rows; ++r) {
    const auto s = hn::Set(d, row_vec[r]);
    Map1(d, dst + r * cols, src + r * cols, cols, [&](auto v) { return ExpF32(d, hn::Sub(v, s)); });
  }
}

void ColExpDifKernel(float* dst, const float* src, const float* col_vec, size_t rows, size_t cols) {
  const hn::ScalableTag<float> d;
  for (size_t r = 0; r < rows; ++r)
    Map2(d, dst + r * cols, src + r * cols, col_vec, cols, [&](auto v, auto c) { return ExpF32(d, hn::Sub(v, c)); });
}

// Any 32-bit lane type: float and int32_t fills share it, and the row broadcasts fill one row each.
template <typename T>
void FillKernel(T* dst, T value, size_t n) {
  hn::Fill(hn::ScalableTag<T>(), value, n, dst);
}

void FillF32Kernel(float* dst, float value, size_t n) { FillKernel(dst, value, n); }
void FillI32Kernel(int32_t* dst, int32_t value, size_t n) { FillKernel(dst, value, n); }

}  // namespace HWY_NAMESPACE
}  // namespace pypto::sim
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace pypto::sim {

HWY_EXPORT(RowExpDifKernel);
HWY_EXPORT(ColExpDifKernel);
HWY_EXPORT(FillF32Kernel);
HWY_EXPORT(FillI32Kernel);

namespace {

// The broadcast vector, copied into `keep` when it lies inside dst (which is written row by row, so
// an aliased vector would be overwritten before it is fully read).
template <typename T>
const T* Stable(const T* vec, size_t len, const T* dst, size_t dst_len, std::vector<T>& keep) {
  const std::less<const T*> before;
  if (before(vec, dst) || !before(vec, dst + dst_len)) return vec;
  keep.assign(vec, vec + len);
  return keep.data();
}

void Fill(float* dst, float value, size_t n) { HWY_DYNAMIC_DISPATCH(FillF32Kernel)(dst, value, n); }
void Fill(int32_t* dst, int32_t value, size_t n) { HWY_DYNAMIC_DISPATCH(FillI32Kernel)(dst, value, n); }

// dst[r][c] = row_vec[r] and dst[r][c] = col_vec[c], for float and int32_t (row_vec / col_vec may
// lie in dst: they are copied first then).
template <typename T>
void RowBroadcast(T* dst, const T* row_vec, size_t rows, size_t cols) {
  std::vector<T> keep;
  row_vec = Stable(row_vec, rows, dst, rows * cols, keep);
  for (size_t r = 0; r < rows; ++r) Fill(dst + r * cols, row_vec[r], cols);
}

template <typename T>
void ColBroadcast(T* dst, const T* col_vec, size_t rows, size_t cols) {
  std::vector<T> keep;
  col_vec = Stable(col_vec, cols, dst, rows * cols, keep);
  for (size_t r = 0; r < rows; ++r) std::memmove(dst + r * cols, col_vec, cols * sizeof(T));
}

}  // namespace

void RowExpandF32(BinaryOp op, float* dst, const float* src, const float* row_vec, size_t rows, size_t cols) {
  std::vector<float> keep;
  row_vec = Stable(row_vec, rows, dst, rows * cols, keep);
  for (size_t r = 0; r < rows; ++r) BinaryScalarF32(op, dst + r * cols, src + r * cols, row_vec[r], cols);
}

void ColExpandF32(BinaryOp op, float* dst, const float* src, const float* col_vec, size_t rows, size_t cols) {
  std::vector<float> keep;
  col_vec = Stable(col_vec, cols, dst, rows * cols, keep);
  for (size_t r = 0; r < rows; ++r) BinaryF32(op, dst + r * cols, src + r * cols, col_vec, cols);
}

bool RowExpandI32(BinaryOp op, int32_t* dst, const int32_t* src, const int32_t* row_vec, size_t rows, size_t cols) {
  std::vector<int32_t> keep;
  row_vec = Stable(row_vec, rows, dst, rows * cols, keep);
  for (size_t r = 0; r < rows; ++r)
    if (!BinaryScalarI32(op, dst + r * cols, src + r * cols, row_vec[r], cols)) return false;
  return true;
}

bool ColExpandI32(BinaryOp op, int32_t* dst, const int32_t* src, const int32_t* col_vec, size_t rows, size_t cols) {
  std::vector<int32_t> keep;
  col_vec = Stable(col_vec, cols, dst, rows * cols, keep);
  for (size_t r = 0; r < rows; ++r)
    if (!BinaryI32(op, dst + r * cols, src + r * cols, col_vec, cols)) return false;
  return true;
}

void RowExpandExpDifF32(float* dst, const float* src, const float* row_vec, size_t rows, size_t cols) {
  std::vector<float> keep;
  row_vec = Stable(row_vec, rows, dst, rows * cols, keep);
  HWY_DYNAMIC_DISPATCH(RowExpDifKernel)(dst, src, row_vec, rows, cols);
}

void ColExpandExpDifF32(float* dst, const float* src, const float* col_vec, size_t rows, size_t cols) {
  std::vector<float> keep;
  col_vec = Stable(col_vec, cols, dst, rows * cols, keep);
  HWY_DYNAMIC_DISPATCH(ColExpDifKernel)(dst, src, col_vec, rows, cols);
}

void RowBroadcastF32(float* dst, const float* row_vec, size_t rows, size_t cols) {
  RowBroadcast(dst, row_vec, rows, cols);
}

void ColBroadcastF32(float* dst, const float* col_vec, size_t rows, size_t cols) {
  ColBroadcast(dst, col_vec, rows, cols);
}

void RowBroadcastI32(int32_t* dst, const int32_t* row_vec, size_t rows, size_t cols) {
  RowBroadcast(dst, row_vec, rows, cols);
}

void ColBroadcastI32(int32_t* dst, const int32_t* col_vec, size_t rows, size_t cols) {
  ColBroadcast(dst, col_vec, rows, cols);
}

void FillF32(float* dst, float value, size_t n) { Fill(dst, value, n); }
void FillI32(int32_t* dst, int32_t value, size_t n) { Fill(dst, value, n); }

}  // namespace pypto::sim
#endif  // HWY_ONCE
