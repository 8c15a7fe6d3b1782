// Matrix products on OpenBLAS's sgemm. Half-precision inputs are widened to fp32 scratch first
// (exactly, with the vectorized conversion kernel); the product itself is always fp32.
#include "kernels/matmul.h"

#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <mutex>
#include <vector>

#include "kernels/convert.h"

namespace pypto::sim {
namespace {

// One OpenBLAS thread per call, set once per process (openblas_set_num_threads is process-wide; it
// does not touch the private OpenBLAS copies that numpy or torch wheels bundle). The simulator already
// runs one host thread per busy core, and OpenBLAS threads any product above 2^18 multiply-adds
// (128x128x128 is 2^21), so its default would put cores x host-cores threads on the host. Measured
// with OpenBLAS 0.3.21 (pthread build) on a 2-core host, 128x128x128, per call: one caller 90-150 us
// single-threaded vs 143-180 us with the default 2 threads; 8 concurrent callers 28-46 GFLOP/s in
// aggregate single-threaded vs 19-26 GFLOP/s. One thread never lost.
void UseOneBlasThread() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

bool Overlaps(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  const auto* pa = static_cast<const char*>(a);
  const auto* pb = static_cast<const char*>(b);
  const std::less<const char*> before;
  return before(pa, pb + b_bytes) && before(pb, pa + a_bytes);
}

// C = A * B (+ C). BLAS takes int sizes; tiles are far below 2^31 elements per side.
void Sgemm(float* c, const float* a, const float* b, size_t m, size_t k, size_t n, bool accumulate,
           MatmulLayout layout) {
  UseOneBlasThread();
  const int mi = static_cast<int>(m), ki = static_cast<int>(k), ni = static_cast<int>(n);
  cblas_sgemm(CblasRowMajor, layout.a_trans ? CblasTrans : CblasNoTrans, layout.b_trans ? CblasTrans : CblasNoTrans,
              mi, ni, ki, 1.0f, a, static_cast<int>(layout.a_stride(m, k)), b, static_cast<int>(layout.b_stride(k, n)),
              accumulate ? 1.0f : 0.0f, c, ni);
}

// Widens the half-precision operands as stored into per-thread scratch and multiplies in fp32.
void MatmulWidened(ElemType type, float* c, const uint16_t* a, const uint16_t* b, size_t m, size_t k, size_t n,
                   bool accumulate, MatmulLayout layout) {
  thread_local std::vector<float> wide_a, wide_b;
  const size_t a_elems = layout.a_extent(m, k), b_elems = layout.b_extent(k, n);
  wide_a.resize(a_elems);
  wide_b.resize(b_elems);
  Convert(type, ElemType::F32, wide_a.data(), a, a_elems, RoundMode::None);
  Convert(type, ElemType::F32, wide_b.data(), b, b_elems, RoundMode::None);
  MatmulF32(c, wide_a.data(), wide_b.data(), m, k, n, accumulate, layout);
}

}  // namespace

void MatmulF32(float* c, const float* a, const float* b, size_t m, size_t k, size_t n, bool accumulate,
               MatmulLayout layout) {
  if (m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum: BLAS would agree, but its leading dimensions must be at least 1
    if (!accumulate) std::fill_n(c, m * n, 0.0f);
    return;
  }
  const size_t c_bytes = m * n * sizeof(float);
  if (!Overlaps(c, c_bytes, a, layout.a_extent(m, k) * sizeof(float)) &&
      !Overlaps(c, c_bytes, b, layout.b_extent(k, n) * sizeof(float))) {
    Sgemm(c, a, b, m, k, n, accumulate, layout);
    return;
  }
  // sgemm reads A and B while writing C, so an aliased product is formed aside.
  std::vector<float> out = accumulate ? std::vector<float>(c, c + m * n) : std::vector<float>(m * n);
  Sgemm(out.data(), a, b, m, k, n, accumulate, layout);
  std::memcpy(c, out.data(), c_bytes);
}

void MatmulF16(float* c, const uint16_t* a, const uint16_t* b, size_t m, size_t k, size_t n, bool accumulate,
               MatmulLayout layout) {
  MatmulWidened(ElemType::F16, c, a, b, m, k, n, accumulate, layout);
}

void MatmulBF16(float* c, const uint16_t* a, const uint16_t* b, size_t m, size_t k, size_t n, bool accumulate,
                MatmulLayout layout) {
  MatmulWidened(ElemType::BF16, c, a, b, m, k, n, accumulate, layout);
}

}  // namespace pypto::sim
