// INT8 matrix products into INT32, on OpenBLAS's sgemm. BLAS has no integer product, but fp32 holds
// every integer up to 2^24 exactly: an int8 product is at most 2^14 in magnitude, so a sum of up to
// 1024 of them, and every partial sum on the way, is exact in any order. The inner dimension goes in
// chunks of 1024, each an exact sgemm of the operands widened to fp32, and the chunks are added into
// C in int32 with wrap-around, as the cube unit's int32 accumulator adds. (The integer loop this
// replaced was 5-10x slower on the INT8 projections of pypto-lib's models.)
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/matmul.h"

namespace pypto::sim {
namespace {

// The longest inner dimension whose int8 dot products and partial sums fp32 represents exactly.
constexpr size_t kExactChunk = 1024;

// dst[r, c] = src[r, c] as fp32 (exact), where src is [rows, cols] row-major or, when `transposed`,
// [cols, rows], its stored rows `stride` elements apart.
void WidenRowMajor(float* dst, const int8_t* src, size_t rows, size_t cols, bool transposed, size_t stride) {
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c)
      dst[r * cols + c] = static_cast<float>(transposed ? src[c * stride + r] : src[r * stride + c]);
}

// c += chunk, or c = chunk, in int32 modulo 2^32 (the chunk's values are exact integers below 2^24).
void AddChunk(int32_t* c, const float* chunk, size_t count, bool first, bool accumulate) {
  for (size_t i = 0; i < count; ++i) {
    const auto value = static_cast<uint32_t>(static_cast<int32_t>(chunk[i]));
    c[i] = first && !accumulate ? static_cast<int32_t>(value)
                                : static_cast<int32_t>(static_cast<uint32_t>(c[i]) + value);
  }
}

}  // namespace

void MatmulI8(int32_t* c, const int8_t* a, const int8_t* b, size_t m, size_t k, size_t n, bool accumulate,
              MatmulLayout layout) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (!accumulate) std::fill_n(c, m * n, 0);
    return;
  }
  // Scratch per thread: one host thread runs each simulated core. Widening first also lets C alias
  // an operand, and lays transposed operands out row-major.
  thread_local std::vector<float> wide_a, wide_b, chunk;
  wide_a.resize(m * k);
  wide_b.resize(k * n);
  chunk.resize(m * n);
  WidenRowMajor(wide_a.data(), a, m, k, layout.a_trans, layout.a_stride(m, k));
  WidenRowMajor(wide_b.data(), b, k, n, layout.b_trans, layout.b_stride(k, n));
  for (size_t k0 = 0; k0 < k; k0 += kExactChunk) {
    const size_t depth = std::min(kExactChunk, k - k0);
    MatmulF32(chunk.data(), wide_a.data() + k0, wide_b.data() + k0 * n, m, depth, n, /*accumulate=*/false,
              MatmulLayout{.lda = k, .ldb = n});
    AddChunk(c, chunk.data(), m * n, k0 == 0, accumulate);
  }
}

}  // namespace pypto::sim
