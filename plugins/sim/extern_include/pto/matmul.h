// The cube's matrix multiply: TMATMUL (C = A B), TMATMUL_ACC (C += A B, in place or from a separate
// input accumulator) and TMATMUL_BIAS (C = A B + bias row), with M = A's valid rows, K = A's valid
// columns, N = B's valid columns. Products accumulate in the accumulator's type (float for half,
// bfloat16 and float inputs; int32_t for int8), summed over k in order.
#ifndef PYPTO_SIM_PTO_MATMUL_H_
#define PYPTO_SIM_PTO_MATMUL_H_

#include <cstdint>

#include "pto/elementwise.h"

namespace pto {
namespace sim {

// c(i, j) = init(i, j) + sum_k a(i, k) b(k, j).
template <typename C, typename A, typename B, typename Init>
void MatMul(C& c, A& a, B& b, Init&& init, const Where& where, const char* name) {
  const int64_t m = a.GetValidRow(), k = a.GetValidCol(), n = b.GetValidCol();
  if (static_cast<int64_t>(b.GetValidRow()) < k)
    Fail(where, name, "A is %lldx%lld but B has only %u valid rows", static_cast<long long>(m),
         static_cast<long long>(k), b.GetValidRow());
  if (m > C::Rows || n > C::Cols)
    Fail(where, name, "the %lldx%lld product does not fit the %dx%d accumulator", static_cast<long long>(m),
         static_cast<long long>(n), C::Rows, C::Cols);
  using Acc = ComputeT<typename C::DType>;
  Acc row[C::Cols];
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) row[j] = init(i, j);
    for (int64_t p = 0; p < k; ++p) {
      const Acc left = static_cast<Acc>(Load(a.At(i, p)));
      for (int64_t j = 0; j < n; ++j) row[j] += left * static_cast<Acc>(Load(b.At(p, j)));
    }
    for (int64_t j = 0; j < n; ++j) c.At(i, j) = Convert<typename C::DType>(row[j]);
  }
}

}  // namespace sim

template <typename C, typename A, typename B>
inline void TMATMUL(C& c, A& a, B& b, sim::Where where = sim::Where::Here()) {
  sim::CheckAssigned(where, "TMATMUL", c, a, b);
  sim::MatMul(c, a, b, [](int64_t, int64_t) { return sim::ComputeT<typename C::DType>(0); }, where, "TMATMUL");
}

// C += A B, reading C's current value.
template <typename C, typename A, typename B>
inline std::enable_if_t<is_tile_v<B>> TMATMUL_ACC(C& c, A& a, B& b, sim::Where where = sim::Where::Here()) {
  sim::CheckAssigned(where, "TMATMUL_ACC", c, a, b);
  sim::MatMul(c, a, b, [&](int64_t i, int64_t j) { return sim::Load(c.At(i, j)); }, where, "TMATMUL_ACC");
}

// C_out = C_in + A B.
template <typename C, typename A, typename B>
inline void TMATMUL_ACC(C& c_out, C& c_in, A& a, B& b, sim::Where where = sim::Where::Here()) {
  sim::CheckAssigned(where, "TMATMUL_ACC", c_out, c_in, a, b);
  sim::MatMul(c_out, a, b, [&](int64_t i, int64_t j) { return sim::Load(c_in.At(i, j)); }, where, "TMATMUL_ACC");
}

template <typename C, typename A, typename B, typename Bias>
inline void TMATMUL_BIAS(C& c, A& a, B& b, Bias& bias, sim::Where where = sim::Where::Here()) {
  sim::CheckAssigned(where, "TMATMUL_BIAS", c, a, b, bias);
  using Acc = sim::ComputeT<typename C::DType>;
  sim::MatMul(c, a, b, [&](int64_t, int64_t j) { return static_cast<Acc>(sim::Load(bias.At(0, j))); }, where,
              "TMATMUL_BIAS");
}

}  // namespace pto

#endif  // PYPTO_SIM_PTO_MATMUL_H_
