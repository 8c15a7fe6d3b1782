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

// An operand as stored, `rows` rows of `cols` int8 elements `stride` apart, as dense fp32 (exact).
// Rows are converted as they lie, a loop the compiler vectorizes; transposes are left to sgemm.
void Widen(float* dst, const int8_t* src, size_t rows, size_t cols, size_t stride) {
  for (size_t r = 0; r < rows; ++r) {
    const int8_t* in = src + r * stride;
    float* out = dst + r * cols;
    for (size_t c = 0; c < cols; ++c) out[c] = static_cast<float>(in[c]);
  }
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
  // an operand. A is stored [m, k] or, transposed, [k, m]; B [k, n] or [n, k].
  thread_local std::vector<float> wide_a, wide_b, chunk;
  wide_a.resize(m * k);
  wide_b.resize(k * n);
  chunk.resize(m * n);
  Widen(wide_a.data(), a, layout.a_trans ? k : m, layout.a_trans ? m : k, layout.a_stride(m, k));
  Widen(wide_b.data(), b, layout.b_trans ? n : k, layout.b_trans ? k : n, layout.b_stride(k, n));
  const MatmulLayout dense{.a_trans = layout.a_trans, .b_trans = layout.b_trans,
                           .lda = layout.a_trans ? m : k, .ldb = layout.b_trans ? k : n};
  for (size_t k0 = 0; k0 < k; k0 += kExactChunk) {
    const size_t depth = std::min(kExactChunk, k - k0);
    // The chunk's columns of A and rows of B, wherever the storage order puts them.
    const float* a0 = wide_a.data() + (layout.a_trans ? k0 * m : k0);
    const float* b0 = wide_b.data() + (layout.b_trans ? k0 : k0 * n);
    MatmulF32(chunk.data(), a0, b0, m, depth, n, /*accumulate=*/false, dense);
    AddChunk(c, chunk.data(), m * n, k0 == 0, accumulate);
  }
}

}  // namespace pypto::sim
