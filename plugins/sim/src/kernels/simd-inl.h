// Per-target building blocks shared by the kernel files: loops that map a vector function over dense
// arrays, the binary operators as vector functions, and exp/log with their IEEE edge cases.
// Highway's "-inl.h" convention: every kernel .cpp includes this once per target (foreach_target),
// so the include guard toggles with HWY_TARGET_TOGGLE instead of being set once.
#if defined(PYPTO_SIM_KERNELS_SIMD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PYPTO_SIM_KERNELS_SIMD_INL_H_
#undef PYPTO_SIM_KERNELS_SIMD_INL_H_
#else
#define PYPTO_SIM_KERNELS_SIMD_INL_H_
#endif

#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include <cstddef>
#include <cstring>
#include <limits>

#include "kernels/elementwise.h"

HWY_BEFORE_NAMESPACE();
namespace pypto::sim {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ---- Tails ----------------------------------------------------------------------------------------
// The last partial vector of an array goes through a padded stack buffer, so every element takes the
// vector path: a tail element gets bit for bit the result it would get in the body, and the scalar
// code needs no second implementation of each operator.

// The first n < Lanes(d) elements of p, the other lanes set to `fill`.
template <class D, typename T = hn::TFromD<D>>
HWY_INLINE hn::Vec<D> LoadTail(D d, const T* p, size_t n, T fill) {
  HWY_ALIGN T buf[hn::MaxLanes(d)];
  for (size_t i = 0; i < hn::MaxLanes(d); ++i) buf[i] = fill;
  std::memcpy(buf, p, n * sizeof(T));  // memcpy, not assignment: p may be a reinterpreted uint16_t array
  return hn::Load(d, buf);
}

// Stores the first n < Lanes(d) lanes of v to p.
template <class D, typename T = hn::TFromD<D>>
HWY_INLINE void StoreTail(D d, hn::Vec<D> v, T* p, size_t n) {
  HWY_ALIGN T buf[hn::MaxLanes(d)];
  hn::Store(v, d, buf);
  std::memcpy(p, buf, n * sizeof(T));
}

// ---- Loops ----------------------------------------------------------------------------------------
// Each vector is loaded before its result is stored, so dst may be the same array as a source. Unused
// tail lanes hold 1, a harmless operand for every op (no division by zero, no log of a negative).

// dst[i] = f(a[i]).
template <class D, class F, typename T = hn::TFromD<D>>
HWY_INLINE void Map1(D d, T* dst, const T* a, size_t n, F f) {
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(f(hn::LoadU(d, a + i)), d, dst + i);
  if (i < n) StoreTail(d, f(LoadTail(d, a + i, n - i, T{1})), dst + i, n - i);
}

// dst[i] = f(a[i], b[i]).
template <class D, class F, typename T = hn::TFromD<D>>
HWY_INLINE void Map2(D d, T* dst, const T* a, const T* b, size_t n, F f) {
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(f(hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, dst + i);
  if (i < n) StoreTail(d, f(LoadTail(d, a + i, n - i, T{1}), LoadTail(d, b + i, n - i, T{1})), dst + i, n - i);
}

// dst[i] = f(src[i]) where dst and src have different lane types but the same lane count (dto is a
// Rebind of dfrom). Used by conversions.
template <class DFrom, class DTo, class F, typename TFrom = hn::TFromD<DFrom>, typename TTo = hn::TFromD<DTo>>
HWY_INLINE void MapConvert(DFrom dfrom, DTo dto, TTo* dst, const TFrom* src, size_t n, F f) {
  const size_t lanes = hn::Lanes(dfrom);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(f(hn::LoadU(dfrom, src + i)), dto, dst + i);
  if (i < n) StoreTail(dto, f(LoadTail(dfrom, src + i, n - i, TFrom{})), dst + i, n - i);
}

// ---- Binary operators -----------------------------------------------------------------------------

// NaN if a or b is NaN, else r. The raw max/min instructions return one operand or the other for NaN
// depending on operand order; torch.maximum/minimum propagate NaN.
template <class V>
HWY_INLINE V PropagateNaN(V a, V b, V r) {
  if constexpr (hwy::IsFloat<hn::TFromV<V>>()) {
    return hn::IfThenElse(hn::IsNaN(a), a, hn::IfThenElse(hn::IsNaN(b), b, r));
  } else {
    (void)a, (void)b;
    return r;
  }
}

struct AddV {
  template <class V> HWY_INLINE V operator()(V a, V b) const { return hn::Add(a, b); }
};
struct SubV {
  template <class V> HWY_INLINE V operator()(V a, V b) const { return hn::Sub(a, b); }
};
struct MulV {  // operator* rather than hn::Mul: Highway 1.0 names only the float multiply
  template <class V> HWY_INLINE V operator()(V a, V b) const { return a * b; }
};
struct DivV {
  template <class V> HWY_INLINE V operator()(V a, V b) const { return hn::Div(a, b); }
};
struct MaxV {
  template <class V> HWY_INLINE V operator()(V a, V b) const { return PropagateNaN(a, b, hn::Max(a, b)); }
};
struct MinV {
  template <class V> HWY_INLINE V operator()(V a, V b) const { return PropagateNaN(a, b, hn::Min(a, b)); }
};

// f(functor for op). Integer division and Fmod have no vector form; their callers handle them before
// coming here.
template <typename T, class F>
HWY_INLINE void WithBinaryOp(BinaryOp op, F f) {
  switch (op) {
    case BinaryOp::Add: return f(AddV{});
    case BinaryOp::Sub: return f(SubV{});
    case BinaryOp::Mul: return f(MulV{});
    case BinaryOp::Div:
      if constexpr (hwy::IsFloat<T>()) return f(DivV{});
      return;
    case BinaryOp::Max: return f(MaxV{});
    case BinaryOp::Min: return f(MinV{});
    case BinaryOp::Fmod:
    case BinaryOp::Rem: return;
  }
}

// ---- Math -----------------------------------------------------------------------------------------

// The smallest float whose exp overflows: ln(FLT_MAX) = 88.7228391..., rounded up to a float.
inline constexpr float kExpOverflow = 88.72283935546875f;

// e^x. hn::Exp is accurate on [-104, 104] (gradual underflow included, 0 below) but maps NaN to 0 and
// is undefined above 104, so NaN passes through and x >= ln(FLT_MAX) gives +inf here.
template <class D, class V>
HWY_INLINE V ExpF32(D d, V x) {
  const V inf = hn::Set(d, std::numeric_limits<float>::infinity());
  const V y = hn::IfThenElse(hn::Ge(x, hn::Set(d, kExpOverflow)), inf, hn::Exp(d, x));
  return hn::IfThenElse(hn::IsNaN(x), x, y);
}

// ln(x). hn::Log covers (0, FLT_MAX], subnormals included; the rest follows IEEE: log(+-0) = -inf,
// log(x < 0) = NaN, log(inf) = inf, log(NaN) = NaN.
template <class D, class V>
HWY_INLINE V LogF32(D d, V x) {
  const V zero = hn::Zero(d);
  const V inf = hn::Set(d, std::numeric_limits<float>::infinity());
  const V nan = hn::Set(d, std::numeric_limits<float>::quiet_NaN());
  const V edge = hn::IfThenElse(hn::Eq(x, zero), hn::Neg(inf), hn::IfThenElse(hn::Lt(x, zero), nan, x));
  return hn::IfThenElse(hn::And(hn::Gt(x, zero), hn::Lt(x, inf)), hn::Log(d, x), edge);
}

}  // namespace HWY_NAMESPACE
}  // namespace pypto::sim
HWY_AFTER_NAMESPACE();

#endif  // PYPTO_SIM_KERNELS_SIMD_INL_H_ toggle
