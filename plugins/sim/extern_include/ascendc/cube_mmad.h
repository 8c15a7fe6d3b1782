// Mmad: the cube's C = A B (or C += A B) with A[m][k] in L0A, B[k][n] in L0B and C[m][n] in L0C,
// each in its memory's fractal order (cube_layout.h). Products accumulate in float for half,
// bfloat16 and float inputs and in int32_t for int8, summed over k in order. cmatrixInitVal starts
// C from zero; otherwise C (or, with a bias operand, the bias row) is the starting value.
#ifndef PYPTO_SIM_ASCENDC_CUBE_MMAD_H_
#define PYPTO_SIM_ASCENDC_CUBE_MMAD_H_

#include <cstdint>
#include <vector>

#include "ascendc/cube_layout.h"
#include "ascendc/local_tensor.h"
#include "ascendc/scalar_types.h"

namespace AscendC {

struct MmadParams {
  uint16_t m = 0;
  uint16_t n = 0;
  uint16_t k = 0;
  bool isBias = false;
  int32_t fmOffset = 0;
  bool enSsparse = false;
  bool enWinogradA = false;
  bool enWinogradB = false;
  uint8_t unitFlag = 0;
  bool kDirectionAlign = false;
  bool cmatrixSource = false;
  bool cmatrixInitVal = true;
  MmadParams() = default;
  MmadParams(uint16_t m_, uint16_t n_, uint16_t k_, bool bias, int32_t fm_offset, bool sparse, bool winograd_a,
             bool winograd_b)
      : m(m_), n(n_), k(k_), isBias(bias), fmOffset(fm_offset), enSsparse(sparse), enWinogradA(winograd_a),
        enWinogradB(winograd_b) {}
};

namespace detail {

// c(i, j) = init(i, j) + sum_p a(i, p) b(p, j), over the fractal orders of L0A, L0B and L0C.
template <typename C, typename A, typename B, typename Init>
inline void CubeMatMul(C* c, const A* a, const B* b, const MmadParams& p, Init&& init) {
  using Acc = std::conditional_t<std::is_integral_v<C>, int32_t, float>;
  const uint64_t k_blocks = CeilDiv(p.k, kC0<A>);
  const uint64_t n_blocks = CeilDiv(p.n, kFractalRows);
  const uint64_t m_padded = RoundUp(p.m, kFractalRows);
  std::vector<Acc> row(p.n);
  for (uint64_t i = 0; i < p.m; ++i) {
    for (uint64_t j = 0; j < p.n; ++j) row[j] = init(L0cOffset(i, j, m_padded), j);
    for (uint64_t q = 0; q < p.k; ++q) {
      const Acc left = static_cast<Acc>(a[L0aOffset<A>(i, q, k_blocks)]);
      for (uint64_t j = 0; j < p.n; ++j) row[j] += left * static_cast<Acc>(b[L0bOffset<B>(q, j, n_blocks)]);
    }
    for (uint64_t j = 0; j < p.n; ++j) c[L0cOffset(i, j, m_padded)] = static_cast<C>(row[j]);
  }
}

}  // namespace detail

template <typename C, typename A, typename B>
inline void Mmad(const LocalTensor<C>& dst, const LocalTensor<A>& fm, const LocalTensor<B>& filter,
                 const MmadParams& params) {
  C* c = dst.GetPhyAddr();
  const bool zero = params.cmatrixInitVal;
  detail::CubeMatMul(c, fm.GetPhyAddr(), filter.GetPhyAddr(), params,
                     [&](uint64_t at, uint64_t) { return zero ? C(0) : c[at]; });
}

// With a bias row (the bias table, C2): C = A B + bias, or C += A B when cmatrixInitVal is false and
// the bias is not taken (cmatrixSource selects the bias as the starting value).
template <typename C, typename A, typename B, typename Bias>
inline void Mmad(const LocalTensor<C>& dst, const LocalTensor<A>& fm, const LocalTensor<B>& filter,
                 const LocalTensor<Bias>& bias, const MmadParams& params) {
  const Bias* row = bias.GetPhyAddr();
  detail::CubeMatMul(dst.GetPhyAddr(), fm.GetPhyAddr(), filter.GetPhyAddr(), params,
                     [&](uint64_t, uint64_t j) { return static_cast<C>(row[j]); });
}

}  // namespace AscendC

#endif  // PYPTO_SIM_ASCENDC_CUBE_MMAD_H_
