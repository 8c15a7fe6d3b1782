// Bitwise and shift operations on integer tiles: TAND/TOR/TXOR/TSHL/TSHR (tile-tile), TANDS/TORS/TXORS/
// TSHLS/TSHRS (tile-scalar) and TNOT, over the destination's valid region. TSHR shifts as C++ does:
// arithmetically for signed element types, logically for unsigned ones.
#ifndef PYPTO_SIM_PTO_BITWISE_H_
#define PYPTO_SIM_PTO_BITWISE_H_

#include <type_traits>

#include "pto/elementwise.h"

namespace pto {

#define PYPTO_SIM_PTO_BITWISE(NAME, SCALAR_NAME, EXPR)                                                            \
  template <typename Dst, typename Src0, typename Src1>                                                           \
  inline std::enable_if_t<is_tile_v<Src1>> NAME(Dst& dst, Src0& src0, Src1& src1,                                 \
                                                sim::Where where = sim::Where::Here()) {                          \
    static_assert(std::is_integral_v<typename Dst::DType>, #NAME " works on integer tiles");                      \
    sim::Binary(dst, src0, src1, [](auto a, auto b) { return EXPR; }, where, #NAME);                              \
  }                                                                                                               \
  template <typename Dst, typename Src>                                                                           \
  inline void SCALAR_NAME(Dst& dst, Src& src, typename Dst::DType scalar, sim::Where where = sim::Where::Here()) { \
    static_assert(std::is_integral_v<typename Dst::DType>, #SCALAR_NAME " works on integer tiles");               \
    const auto b = scalar;                                                                                        \
    sim::Unary(dst, src, [b](auto a) { return EXPR; }, where, #SCALAR_NAME);                                      \
  }
PYPTO_SIM_PTO_BITWISE(TAND, TANDS, a & b)
PYPTO_SIM_PTO_BITWISE(TOR, TORS, a | b)
PYPTO_SIM_PTO_BITWISE(TXOR, TXORS, a ^ b)
PYPTO_SIM_PTO_BITWISE(TSHL, TSHLS, a << b)
PYPTO_SIM_PTO_BITWISE(TSHR, TSHRS, a >> b)
#undef PYPTO_SIM_PTO_BITWISE

template <typename Dst, typename Src>
inline void TNOT(Dst& dst, Src& src, sim::Where where = sim::Where::Here()) {
  static_assert(std::is_integral_v<typename Dst::DType>, "TNOT works on integer tiles");
  sim::Unary(dst, src, [](auto a) { return ~a; }, where, "TNOT");
}

}  // namespace pto

#endif  // PYPTO_SIM_PTO_BITWISE_H_
