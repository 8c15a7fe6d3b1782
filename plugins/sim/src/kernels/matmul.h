// Dense row-major matrix products: C[m,n] = A[m,k] * B[k,n], or C += A * B, all on OpenBLAS's sgemm:
// floating-point inputs widened to fp32, INT8 inputs in chunks of the inner dimension that fp32 sums
// exactly (matmul_int8.cpp).
//
// OpenBLAS runs single-threaded here (openblas_set_num_threads(1) on first use): the simulator
// already runs one host thread per busy core, and a multi-threaded OpenBLAS on top would
// oversubscribe the host (measurements in matmul.cpp).
//
// C may be the same array as A or B; the product is then formed in scratch memory first.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pypto::sim {

// Operands given transposed: A as [k, m] (a_trans) and B as [n, k] (b_trans), row-major, as
// pl.matmul(..., a_trans=True, b_trans=True) passes them. `lda`/`ldb` are the row strides of A and
// B as stored, in elements, when their rows are longer than the product reads (a contraction
// narrowed to its valid part reads the first k elements of each row of a [m, K] A); 0: dense.
struct MatmulLayout {
  bool a_trans = false;
  bool b_trans = false;
  size_t lda = 0;
  size_t ldb = 0;

  size_t a_stride(size_t m, size_t k) const { return lda ? lda : a_trans ? m : k; }
  size_t b_stride(size_t k, size_t n) const { return ldb ? ldb : b_trans ? k : n; }
  // Elements A and B span as stored.
  size_t a_extent(size_t m, size_t k) const { return (a_trans ? k : m) * a_stride(m, k); }
  size_t b_extent(size_t k, size_t n) const { return (b_trans ? n : k) * b_stride(k, n); }
};

void MatmulF32(float* c, const float* a, const float* b, size_t m, size_t k, size_t n, bool accumulate,
               MatmulLayout layout = {});

// A and B hold IEEE half (F16) or bfloat16 (BF16) bit patterns; they are widened exactly to fp32 and
// multiplied in fp32, like the cube unit's fp32 accumulation.
void MatmulF16(float* c, const uint16_t* a, const uint16_t* b, size_t m, size_t k, size_t n, bool accumulate,
               MatmulLayout layout = {});
void MatmulBF16(float* c, const uint16_t* a, const uint16_t* b, size_t m, size_t k, size_t n, bool accumulate,
                MatmulLayout layout = {});

// INT8 inputs into an INT32 accumulator, exactly: every product and partial sum is an integer, and
// sums beyond the int32 range wrap around modulo 2^32, as the cube unit's int32 accumulator does.
void MatmulI8(int32_t* c, const int8_t* a, const int8_t* b, size_t m, size_t k, size_t n, bool accumulate,
              MatmulLayout layout = {});

}  // namespace pypto::sim
