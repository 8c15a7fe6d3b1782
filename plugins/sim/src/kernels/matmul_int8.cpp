// INT8 matrix products into INT32, compiled once per Highway target (foreach_target re-includes this
// file). BLAS has no integer product, so this is a plain loop: the operands are widened to int32 in
// per-thread scratch (which also lays a transposed operand out row-major and lets C alias an input),
// then each vector of C's columns sums its products in a register over the whole inner dimension.
// Vector integer adds and multiplies wrap modulo 2^32, like the cube unit's int32 accumulator, and
// the sum of integers is the same in any order, so the result is exact.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/matmul_int8.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <vector>

#include "kernels/matmul.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace pypto::sim {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// C[m,n] (+)= A[m,k] * B[k,n], all int32 and row-major.
void MatmulI32Kernel(int32_t* c, const int32_t* a, const int32_t* b, size_t m, size_t k, size_t n,
                     bool accumulate) {
  const hn::ScalableTag<int32_t> d;
  const size_t lanes = hn::Lanes(d);
  for (size_t j = 0; j < n; j += lanes) {
    const size_t width = std::min(lanes, n - j);
    // A partial last vector reads zeros past the row's end, so its spare lanes add nothing.
    auto load = [&](const int32_t* p) { return width == lanes ? hn::LoadU(d, p) : LoadTail(d, p, width, 0); };
    for (size_t i = 0; i < m; ++i) {
      const int32_t* a_row = a + i * k;
      auto sum = accumulate ? load(c + i * n + j) : hn::Zero(d);
      // operator* rather than hn::Mul: Highway 1.0 names only the float multiply.
      for (size_t p = 0; p < k; ++p) sum = hn::Add(sum, hn::Set(d, a_row[p]) * load(b + p * n + j));
      if (width == lanes) hn::StoreU(sum, d, c + i * n + j);
      else StoreTail(d, sum, c + i * n + j, width);
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace pypto::sim
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace pypto::sim {

HWY_EXPORT(MatmulI32Kernel);

namespace {

// dst[r, c] = src[r, c] widened, where src is [rows, cols] row-major or, when `transposed`, [cols, rows],
// its stored rows `stride` elements apart.
void WidenRowMajor(int32_t* dst, const int8_t* src, size_t rows, size_t cols, bool transposed, size_t stride) {
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) dst[r * cols + c] = transposed ? src[c * stride + r] : src[r * stride + c];
}

}  // namespace

void MatmulI8(int32_t* c, const int8_t* a, const int8_t* b, size_t m, size_t k, size_t n, bool accumulate,
              MatmulLayout layout) {
  if (m == 0 || n == 0) return;
  thread_local std::vector<int32_t> wide_a, wide_b;
  wide_a.resize(m * k);
  wide_b.resize(k * n);
  WidenRowMajor(wide_a.data(), a, m, k, layout.a_trans, layout.a_stride(m, k));
  WidenRowMajor(wide_b.data(), b, k, n, layout.b_trans, layout.b_stride(k, n));
  HWY_DYNAMIC_DISPATCH(MatmulI32Kernel)(c, wide_a.data(), wide_b.data(), m, k, n, accumulate);
}

}  // namespace pypto::sim
#endif  // HWY_ONCE
