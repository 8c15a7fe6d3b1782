// Element-wise tile operations: tile-tile (TADD ... TMIN), tile-scalar (TADDS ... TMINS), unary math
// (TEXP ... TNEG), TEXPANDS, TCVT, the compare/select ops TCMP/TCMPS, TSEL/TSELS, and TREM/TREMS,
// TFMOD/TFMODS, TLRELU/TPRELU, the three-operand TADDC/TSUBC/TADDSC/TSUBSC and the partial
// TPARTADD/TPARTMUL/TPARTMAX/TPARTMIN.
//
// Each covers the destination's valid region; 16-bit floats compute in float and round back to nearest
// even (TCVT rounds by its RoundMode). A TCMP mask packs one bit per element, LSB first: element (r, c)
// is bit c % 8 of byte (r, c / 8) of a uint8_t mask tile, which is what TSEL reads.
#ifndef PYPTO_SIM_PTO_ELEMENTWISE_H_
#define PYPTO_SIM_PTO_ELEMENTWISE_H_

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "pto/check.h"
#include "pto/convert.h"
#include "pto/tile.h"

namespace pto {
namespace sim {

template <typename T>
ComputeT<T> Load(T value) {
  return static_cast<ComputeT<T>>(value);
}

template <typename Dst, typename... Srcs>
void CheckAssigned(const Where& where, const char* op, const Dst& dst, const Srcs&... srcs) {
  dst.CheckAssigned(where, op);
  (srcs.CheckAssigned(where, op), ...);
}

// dst(r, c) = f(r, c) over dst's valid region.
template <typename Dst, typename F>
void ForValid(Dst& dst, F&& f) {
  const int64_t rows = dst.GetValidRow(), cols = dst.GetValidCol();
  using T = typename Dst::DType;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) dst.At(r, c) = Convert<T>(f(r, c));
}

template <typename Dst, typename Src0, typename Src1, typename Op>
void Binary(Dst& dst, Src0& src0, Src1& src1, Op op, const Where& where, const char* name) {
  CheckAssigned(where, name, dst, src0, src1);
  ForValid(dst, [&](int64_t r, int64_t c) { return op(Load(src0.At(r, c)), Load(src1.At(r, c))); });
}

template <typename Dst, typename Src, typename Op>
void Unary(Dst& dst, Src& src, Op op, const Where& where, const char* name) {
  CheckAssigned(where, name, dst, src);
  ForValid(dst, [&](int64_t r, int64_t c) { return op(Load(src.At(r, c))); });
}

template <typename T>
bool Compare(T a, T b, CmpMode mode) {
  switch (mode) {
    case CmpMode::EQ: return a == b;
    case CmpMode::NE: return a != b;
    case CmpMode::LT: return a < b;
    case CmpMode::LE: return a <= b;
    case CmpMode::GT: return a > b;
    case CmpMode::GE: return a >= b;
  }
  return false;
}

// Writes the packed mask of `predicate` over src's valid region into `mask`.
template <typename Mask, typename Src, typename Pred>
void PackMask(Mask& mask, const Src& src, Pred&& predicate) {
  static_assert(sizeof(typename Mask::DType) == 1, "a TCMP mask tile holds uint8_t");
  const int64_t rows = src.GetValidRow(), cols = src.GetValidCol();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t byte = 0; byte < (cols + 7) / 8; ++byte) mask.At(r, byte) = 0;
    for (int64_t c = 0; c < cols; ++c)
      if (predicate(r, c)) mask.At(r, c / 8) = static_cast<typename Mask::DType>(mask.At(r, c / 8) | (1u << (c % 8)));
  }
}

}  // namespace sim

#define PYPTO_SIM_PTO_BINARY(NAME, EXPR)                                                                     \
  template <typename Dst, typename Src0, typename Src1>                                                      \
  inline void NAME(Dst& dst, Src0& src0, Src1& src1, sim::Where where = sim::Where::Here()) {                \
    sim::Binary(dst, src0, src1, [](auto a, auto b) { return EXPR; }, where, #NAME);                         \
  }
PYPTO_SIM_PTO_BINARY(TADD, a + b)
PYPTO_SIM_PTO_BINARY(TSUB, a - b)
PYPTO_SIM_PTO_BINARY(TMUL, a * b)
PYPTO_SIM_PTO_BINARY(TDIV, a / b)
PYPTO_SIM_PTO_BINARY(TMAX, std::max(a, b))
PYPTO_SIM_PTO_BINARY(TMIN, std::min(a, b))
#undef PYPTO_SIM_PTO_BINARY

#define PYPTO_SIM_PTO_SCALAR(NAME, EXPR)                                                                     \
  template <typename Dst, typename Src>                                                                      \
  inline void NAME(Dst& dst, Src& src, typename Src::DType scalar, sim::Where where = sim::Where::Here()) { \
    const auto b = sim::Load(scalar);                                                                        \
    sim::Unary(dst, src, [b](auto a) { return EXPR; }, where, #NAME);                                        \
  }
PYPTO_SIM_PTO_SCALAR(TADDS, a + b)
PYPTO_SIM_PTO_SCALAR(TSUBS, a - b)
PYPTO_SIM_PTO_SCALAR(TMULS, a * b)
PYPTO_SIM_PTO_SCALAR(TDIVS, a / b)
PYPTO_SIM_PTO_SCALAR(TMAXS, std::max(a, b))
PYPTO_SIM_PTO_SCALAR(TMINS, std::min(a, b))
#undef PYPTO_SIM_PTO_SCALAR

// dst = scalar / src, the scalar-first form of TDIVS.
template <typename Dst, typename Src>
inline std::enable_if_t<is_tile_v<Src>> TDIVS(Dst& dst, typename Dst::DType scalar, Src& src,
                                              sim::Where where = sim::Where::Here()) {
  const auto a = sim::Load(scalar);
  sim::Unary(dst, src, [a](auto b) { return a / b; }, where, "TDIVS");
}

#define PYPTO_SIM_PTO_UNARY(NAME, EXPR)                                                       \
  template <typename Dst, typename Src>                                                       \
  inline void NAME(Dst& dst, Src& src, sim::Where where = sim::Where::Here()) {               \
    sim::Unary(dst, src, [](auto a) { return EXPR; }, where, #NAME);                          \
  }
PYPTO_SIM_PTO_UNARY(TEXP, std::exp(a))
PYPTO_SIM_PTO_UNARY(TLOG, std::log(a))
PYPTO_SIM_PTO_UNARY(TSQRT, std::sqrt(a))
PYPTO_SIM_PTO_UNARY(TRSQRT, decltype(a)(1) / std::sqrt(a))
PYPTO_SIM_PTO_UNARY(TRECIP, decltype(a)(1) / a)
PYPTO_SIM_PTO_UNARY(TABS, a < 0 ? -a : a)
PYPTO_SIM_PTO_UNARY(TRELU, a > 0 ? a : decltype(a)(0))
PYPTO_SIM_PTO_UNARY(TNEG, -a)
#undef PYPTO_SIM_PTO_UNARY

// TRSQRT with a scratch tile, which the simulator does not need.
template <typename Dst, typename Src, typename Tmp>
inline std::enable_if_t<is_tile_v<Tmp>> TRSQRT(Dst& dst, Src& src, Tmp&, sim::Where where = sim::Where::Here()) {
  TRSQRT(dst, src, where);
}

template <typename Dst>
inline void TEXPANDS(Dst& dst, typename Dst::DType scalar, sim::Where where = sim::Where::Here()) {
  dst.CheckAssigned(where, "TEXPANDS");
  const auto value = sim::Load(scalar);
  sim::ForValid(dst, [value](int64_t, int64_t) { return value; });
}

template <typename Dst, typename Src>
inline void TCVT(Dst& dst, Src& src, RoundMode mode, SaturationMode = SaturationMode::OFF,
                 sim::Where where = sim::Where::Here()) {
  sim::CheckAssigned(where, "TCVT", dst, src);
  using T = typename Dst::DType;
  const int64_t rows = dst.GetValidRow(), cols = dst.GetValidCol();
  // Read the whole row before writing it: ptoas converts in place (a float tile and a narrower tile
  // at the same address), where the destination row overlaps the source row.
  for (int64_t r = 0; r < rows; ++r) {
    constexpr int kChunk = 256;
    for (int64_t c0 = 0; c0 < cols; c0 += kChunk) {
      const int64_t n = std::min<int64_t>(kChunk, cols - c0);
      T out[kChunk];
      for (int64_t c = 0; c < n; ++c) out[c] = sim::Convert<T>(src.At(r, c0 + c), mode);
      for (int64_t c = 0; c < n; ++c) dst.At(r, c0 + c) = out[c];
    }
  }
}
template <typename Dst, typename Src, typename Tmp>
inline std::enable_if_t<is_tile_v<Tmp>> TCVT(Dst& dst, Src& src, Tmp&, RoundMode mode,
                                             sim::Where where = sim::Where::Here()) {
  TCVT(dst, src, mode, SaturationMode::OFF, where);
}

template <typename Mask, typename Src0, typename Src1>
inline std::enable_if_t<is_tile_v<Src1>> TCMP(Mask& mask, Src0& src0, Src1& src1, CmpMode mode,
                                              sim::Where where = sim::Where::Here()) {
  sim::CheckAssigned(where, "TCMP", mask, src0, src1);
  sim::PackMask(mask, src0, [&](int64_t r, int64_t c) {
    return sim::Compare(sim::Load(src0.At(r, c)), sim::Load(src1.At(r, c)), mode);
  });
}
template <typename Mask, typename Src>
inline void TCMPS(Mask& mask, Src& src, typename Src::DType scalar, CmpMode mode,
                  sim::Where where = sim::Where::Here()) {
  sim::CheckAssigned(where, "TCMPS", mask, src);
  const auto b = sim::Load(scalar);
  sim::PackMask(mask, src, [&](int64_t r, int64_t c) { return sim::Compare(sim::Load(src.At(r, c)), b, mode); });
}

// dst = mask ? src0 : src1, element by element; `tmp` is scratch the simulator does not need.
template <typename Dst, typename Mask, typename Src0, typename Src1, typename Tmp>
inline void TSEL(Dst& dst, Mask& mask, Src0& src0, Src1& src1, Tmp&, sim::Where where = sim::Where::Here()) {
  sim::CheckAssigned(where, "TSEL", dst, mask, src0, src1);
  sim::ForValid(dst, [&](int64_t r, int64_t c) {
    const bool set = (mask.At(r, c / 8) >> (c % 8)) & 1u;
    return set ? sim::Load(src0.At(r, c)) : sim::Load(src1.At(r, c));
  });
}

// Remainders: TREM takes the divisor's sign (a - floor(a / b) b), TFMOD the dividend's (fmod).
namespace sim {
template <typename T>
T FloorRemainder(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    const T r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
  } else {
    return a - std::floor(a / b) * b;
  }
}
template <typename T>
T TruncRemainder(T a, T b) {
  if constexpr (std::is_integral_v<T>) return a % b;
  else return std::fmod(a, b);
}
}  // namespace sim

template <typename Dst, typename Src0, typename Src1, typename Tmp>
inline void TREM(Dst& dst, Src0& src0, Src1& src1, Tmp&, sim::Where where = sim::Where::Here()) {
  sim::Binary(dst, src0, src1, [](auto a, auto b) { return sim::FloorRemainder(a, b); }, where, "TREM");
}
template <typename Dst, typename Src, typename Tmp>
inline std::enable_if_t<is_tile_v<Tmp>> TREMS(Dst& dst, Src& src, typename Src::DType scalar, Tmp&,
                                              sim::Where where = sim::Where::Here()) {
  const auto b = sim::Load(scalar);
  sim::Unary(dst, src, [b](auto a) { return sim::FloorRemainder(a, b); }, where, "TREMS");
}
template <typename Dst, typename Src0, typename Src1>
inline std::enable_if_t<is_tile_v<Src1>> TFMOD(Dst& dst, Src0& src0, Src1& src1,
                                               sim::Where where = sim::Where::Here()) {
  sim::Binary(dst, src0, src1, [](auto a, auto b) { return sim::TruncRemainder(a, b); }, where, "TFMOD");
}
template <typename Dst, typename Src>
inline void TFMODS(Dst& dst, Src& src, typename Src::DType scalar, sim::Where where = sim::Where::Here()) {
  const auto b = sim::Load(scalar);
  sim::Unary(dst, src, [b](auto a) { return sim::TruncRemainder(a, b); }, where, "TFMODS");
}

// Leaky and parametric ReLU: src where positive, else src times the slope (a scalar / src1).
template <typename Dst, typename Src>
inline void TLRELU(Dst& dst, Src& src, typename Src::DType slope, sim::Where where = sim::Where::Here()) {
  const auto b = sim::Load(slope);
  sim::Unary(dst, src, [b](auto a) { return a > 0 ? a : a * b; }, where, "TLRELU");
}
template <typename Dst, typename Src0, typename Src1, typename Tmp>
inline void TPRELU(Dst& dst, Src0& src0, Src1& src1, Tmp&, sim::Where where = sim::Where::Here()) {
  sim::Binary(dst, src0, src1, [](auto a, auto b) { return a > 0 ? a : a * b; }, where, "TPRELU");
}

// Three operands: TADDC = src0 + src1 + src2, TSUBC = src0 - src1 + src2, TADDSC = src0 + scalar + src1,
// TSUBSC = src0 - scalar + src1.
template <typename Dst, typename Src0, typename Src1, typename Src2>
inline std::enable_if_t<is_tile_v<Src2>> TADDC(Dst& dst, Src0& src0, Src1& src1, Src2& src2,
                                               sim::Where where = sim::Where::Here()) {
  sim::CheckAssigned(where, "TADDC", dst, src0, src1, src2);
  sim::ForValid(dst, [&](int64_t r, int64_t c) {
    return sim::Load(src0.At(r, c)) + sim::Load(src1.At(r, c)) + sim::Load(src2.At(r, c));
  });
}
template <typename Dst, typename Src0, typename Src1, typename Src2>
inline std::enable_if_t<is_tile_v<Src2>> TSUBC(Dst& dst, Src0& src0, Src1& src1, Src2& src2,
                                               sim::Where where = sim::Where::Here()) {
  sim::CheckAssigned(where, "TSUBC", dst, src0, src1, src2);
  sim::ForValid(dst, [&](int64_t r, int64_t c) {
    return sim::Load(src0.At(r, c)) - sim::Load(src1.At(r, c)) + sim::Load(src2.At(r, c));
  });
}
template <typename Dst, typename Src0, typename Src1>
inline void TADDSC(Dst& dst, Src0& src0, typename Src0::DType scalar, Src1& src1,
                   sim::Where where = sim::Where::Here()) {
  const auto s = sim::Load(scalar);
  sim::Binary(dst, src0, src1, [s](auto a, auto b) { return a + s + b; }, where, "TADDSC");
}
template <typename Dst, typename Src0, typename Src1>
inline void TSUBSC(Dst& dst, Src0& src0, typename Src0::DType scalar, Src1& src1,
                   sim::Where where = sim::Where::Here()) {
  const auto s = sim::Load(scalar);
  sim::Binary(dst, src0, src1, [s](auto a, auto b) { return a - s + b; }, where, "TSUBSC");
}

// dst = mask ? src : scalar.
template <typename Dst, typename Mask, typename Src, typename Tmp>
inline void TSELS(Dst& dst, Mask& mask, Src& src, Tmp&, typename Src::DType scalar,
                  sim::Where where = sim::Where::Here()) {
  sim::CheckAssigned(where, "TSELS", dst, mask, src);
  const auto other = sim::Load(scalar);
  sim::ForValid(dst, [&](int64_t r, int64_t c) {
    const bool set = (mask.At(r, c / 8) >> (c % 8)) & 1u;
    return set ? sim::Load(src.At(r, c)) : other;
  });
}

// Partial ops over dst's valid region: both operands where both are valid, else the one that is.
#define PYPTO_SIM_PTO_PART(NAME, EXPR)                                                                     \
  template <typename Dst, typename Src0, typename Src1>                                                    \
  inline void NAME(Dst& dst, Src0& src0, Src1& src1, sim::Where where = sim::Where::Here()) {              \
    sim::CheckAssigned(where, #NAME, dst, src0, src1);                                                     \
    sim::ForValid(dst, [&](int64_t r, int64_t c) {                                                         \
      const bool in0 = r < src0.GetValidRow() && c < src0.GetValidCol();                                   \
      const bool in1 = r < src1.GetValidRow() && c < src1.GetValidCol();                                   \
      const auto a = sim::Load(src0.At(in0 ? r : 0, in0 ? c : 0));                                         \
      const auto b = sim::Load(src1.At(in1 ? r : 0, in1 ? c : 0));                                         \
      return in0 && in1 ? (EXPR) : in0 ? a : b;                                                            \
    });                                                                                                    \
  }
PYPTO_SIM_PTO_PART(TPARTADD, a + b)
PYPTO_SIM_PTO_PART(TPARTMUL, a * b)
PYPTO_SIM_PTO_PART(TPARTMAX, std::max(a, b))
PYPTO_SIM_PTO_PART(TPARTMIN, std::min(a, b))
#undef PYPTO_SIM_PTO_PART

}  // namespace pto

#endif  // PYPTO_SIM_PTO_ELEMENTWISE_H_
