// Element type conversion. Vector paths (compiled once per Highway target) cover the common cases:
// F32 -> integers in every mode, I32 -> F32, F16/BF16 <-> F32 to nearest even. Everything else takes
// one exact scalar path: the source value is widened exactly to double, then rounded once to the
// target with the requested mode.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/convert.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

#include "kernels/convert.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace pypto::sim {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Modes arrive resolved (see Resolve below): integer targets see Trunc, Rint, Round, Floor or Ceil;
// float targets see Rint, Floor, Ceil, Trunc or Odd.

// v rounded to integral values as float -> integer conversion wants; Trunc is left to ConvertTo.
template <class D, class V>
HWY_INLINE V RoundForInt(D d, V v, RoundMode mode) {
  switch (mode) {
    case RoundMode::Rint: return hn::Round(v);  // ties to even
    case RoundMode::Floor: return hn::Floor(v);
    case RoundMode::Ceil: return hn::Ceil(v);
    case RoundMode::Round: {  // ties away from zero; v - trunc(v) is exact
      const V t = hn::Trunc(v);
      const auto away = hn::Ge(hn::Abs(hn::Sub(v, t)), hn::Set(d, 0.5f));
      return hn::IfThenElse(away, hn::Add(t, hn::CopySign(hn::Set(d, 1.0f), v)), t);
    }
    default: return v;
  }
}

// ConvertTo truncates and saturates out-of-range values (inf included); NaN becomes 0 here.
template <class D, class V>
HWY_INLINE auto ToI32(D d, V v, RoundMode mode) {
  const hn::RebindToSigned<D> di;
  return hn::IfThenZeroElse(hn::RebindMask(di, hn::IsNaN(v)), hn::ConvertTo(di, RoundForInt(d, v, mode)));
}

// Rounds to nearest even on the bit pattern: add 0x7FFF plus the lowest kept bit, keep the high half
// (overflow carries into the exponent and reaches inf, as it should). NaN is made quiet and keeps its
// sign and leading payload bits.
template <class D, class V>
HWY_INLINE auto ToBF16Bits(D /*d*/, V v) {
  const hn::RebindToUnsigned<D> du;
  const hn::RebindToSigned<D> di;
  const auto bits = hn::BitCast(du, v);
  const auto high = hn::ShiftRight<16>(bits);
  const auto bias = hn::Add(hn::Set(du, 0x7FFFu), hn::And(high, hn::Set(du, 1u)));
  const auto rounded = hn::ShiftRight<16>(hn::Add(bits, bias));
  const auto out = hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(v)), hn::Or(high, hn::Set(du, 0x40u)), rounded);
  // Every lane is below 2^16, so the saturating demotion only narrows.
  return hn::DemoteTo(hn::Rebind<uint16_t, D>(), hn::BitCast(di, out));
}

// Whether this target converts F16 in hardware. Highway 1.0's SSE4 fallback truncates and turns
// inf/NaN into finite values, so those targets take the scalar path instead.
constexpr bool kHasF16C = HWY_ARCH_X86 && HWY_TARGET < HWY_SSE4
#ifdef HWY_DISABLE_F16C
                          && false
#endif
    ;

template <class D>
bool FromF32(D df, ElemType to, void* dst, const float* src, size_t n, RoundMode mode) {
  const auto to_i32 = [&](auto v) { return ToI32(df, v, mode); };
  // Narrower integers: saturate to int32, clamp to the target's range, then narrow. The clamp is
  // ours because Highway 1.0's AVX2 int32 -> uint8 demotion maps 32768 and above to 0.
  const auto narrow = [&](auto dn) {
    using T = hn::TFromD<decltype(dn)>;
    const hn::RebindToSigned<D> di;
    const auto lo = hn::Set(di, std::numeric_limits<T>::min()), hi = hn::Set(di, std::numeric_limits<T>::max());
    MapConvert(df, dn, static_cast<T*>(dst), src, n,
               [&](auto v) { return hn::DemoteTo(dn, hn::Min(hn::Max(to_i32(v), lo), hi)); });
    return true;
  };
  switch (to) {
    case ElemType::I32:
      MapConvert(df, hn::RebindToSigned<D>(), static_cast<int32_t*>(dst), src, n, to_i32);
      return true;
    case ElemType::I16: return narrow(hn::Rebind<int16_t, D>());
    case ElemType::I8: return narrow(hn::Rebind<int8_t, D>());
    case ElemType::U8: return narrow(hn::Rebind<uint8_t, D>());
    case ElemType::BF16:
      if (mode != RoundMode::Rint) return false;
      MapConvert(df, hn::Rebind<uint16_t, D>(), static_cast<uint16_t*>(dst), src, n,
                 [&](auto v) { return ToBF16Bits(df, v); });
      return true;
    case ElemType::F16:
      if constexpr (kHasF16C) {
        if (mode != RoundMode::Rint) return false;  // vcvtps2ph rounds as MXCSR says: nearest even
        const hn::Rebind<hwy::float16_t, D> dh;
        MapConvert(df, dh, static_cast<hwy::float16_t*>(dst), src, n, [&](auto v) { return hn::DemoteTo(dh, v); });
        return true;
      }
      return false;
    default: return false;
  }
}

template <class D>
bool ToF32(D df, ElemType from, float* dst, const void* src, size_t n, RoundMode mode) {
  switch (from) {
    case ElemType::I32:
      if (mode != RoundMode::Rint) return false;  // ConvertTo rounds to nearest even
      MapConvert(hn::RebindToSigned<D>(), df, dst, static_cast<const int32_t*>(src), n,
                 [&](auto v) { return hn::ConvertTo(df, v); });
      return true;
    case ElemType::BF16:
      MapConvert(hn::Rebind<hwy::bfloat16_t, D>(), df, dst, static_cast<const hwy::bfloat16_t*>(src), n,
                 [&](auto v) { return hn::PromoteTo(df, v); });
      return true;
    case ElemType::F16:
      if constexpr (kHasF16C) {
        MapConvert(hn::Rebind<hwy::float16_t, D>(), df, dst, static_cast<const hwy::float16_t*>(src), n,
                   [&](auto v) { return hn::PromoteTo(df, v); });
        return true;
      }
      return false;
    default: return false;
  }
}

// False when this target has no vector path for the pair; nothing is written then.
bool ConvertKernel(ElemType from, ElemType to, void* dst, const void* src, size_t n, RoundMode mode) {
  const hn::ScalableTag<float> df;
  if (from == ElemType::F32) return FromF32(df, to, dst, static_cast<const float*>(src), n, mode);
  if (to == ElemType::F32) return ToF32(df, from, static_cast<float*>(dst), src, n, mode);
  return false;
}

}  // namespace HWY_NAMESPACE
}  // namespace pypto::sim
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace pypto::sim {

HWY_EXPORT(ConvertKernel);

namespace {

bool IsInteger(ElemType t) { return t != ElemType::F32 && t != ElemType::F16 && t != ElemType::BF16; }

// The rounding a conversion performs (convert.h): integer targets get Trunc, Rint, Round, Floor or
// Ceil; float targets get Rint, Floor, Ceil, Trunc or Odd.
RoundMode Resolve(ElemType from, ElemType to, RoundMode mode) {
  if (IsInteger(to)) {
    if (mode == RoundMode::None) return RoundMode::Trunc;
    return mode == RoundMode::Odd ? RoundMode::Rint : mode;
  }
  if (mode == RoundMode::None || mode == RoundMode::Round) return RoundMode::Rint;
  if (mode == RoundMode::Odd && !(from == ElemType::F32 && (to == ElemType::F16 || to == ElemType::BF16)))
    return RoundMode::Rint;
  return mode;
}

// ---- Scalar path ----------------------------------------------------------------------------------

template <typename T>
T LoadAt(const void* p, size_t i) {
  T v;
  std::memcpy(&v, static_cast<const char*>(p) + i * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
void StoreAt(void* p, size_t i, T v) {
  std::memcpy(static_cast<char*>(p) + i * sizeof(T), &v, sizeof(T));
}

float FloatFromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint32_t BitsOfFloat(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

// IEEE half -> float, exactly. NaN is made quiet, as vcvtph2ps does.
float HalfToFloat(uint16_t h) {
  const float sign = (h & 0x8000) ? -1.0f : 1.0f;
  const int exp = (h >> 10) & 0x1F;
  const int mant = h & 0x3FF;
  if (exp == 0) return sign * std::ldexp(static_cast<float>(mant), -24);
  if (exp == 31) {
    if (mant == 0) return sign * std::numeric_limits<float>::infinity();
    return FloatFromBits((static_cast<uint32_t>(h & 0x8000) << 16) | 0x7FC00000u | (static_cast<uint32_t>(mant) << 13));
  }
  return sign * std::ldexp(static_cast<float>(1024 + mant), exp - 25);
}

// The source element as a double: exact for every source type.
double Decode(ElemType t, const void* p, size_t i) {
  switch (t) {
    case ElemType::F32: return LoadAt<float>(p, i);
    case ElemType::F16: return HalfToFloat(LoadAt<uint16_t>(p, i));
    case ElemType::BF16: return FloatFromBits(static_cast<uint32_t>(LoadAt<uint16_t>(p, i)) << 16);
    case ElemType::I32: return LoadAt<int32_t>(p, i);
    case ElemType::I16: return LoadAt<int16_t>(p, i);
    case ElemType::I8: return LoadAt<int8_t>(p, i);
    case ElemType::U8: return LoadAt<uint8_t>(p, i);
  }
  return 0;
}

int64_t DecodeInt(ElemType t, const void* p, size_t i) {
  switch (t) {
    case ElemType::I32: return LoadAt<int32_t>(p, i);
    case ElemType::I16: return LoadAt<int16_t>(p, i);
    case ElemType::I8: return LoadAt<int8_t>(p, i);
    case ElemType::U8: return LoadAt<uint8_t>(p, i);
    default: return 0;
  }
}

// Ties to even without depending on the floating-point environment (std::nearbyint would).
double RoundHalfEven(double x) {
  const double f = std::floor(x);
  const double diff = x - f;  // exact
  return diff > 0.5 || (diff == 0.5 && std::fmod(f, 2.0) != 0) ? f + 1 : f;
}

double RoundIntegral(double x, RoundMode mode) {
  switch (mode) {
    case RoundMode::Rint: return RoundHalfEven(x);
    case RoundMode::Round: return std::round(x);
    case RoundMode::Floor: return std::floor(x);
    case RoundMode::Ceil: return std::ceil(x);
    case RoundMode::Odd: {  // inexact results take the odd neighbour
      const double t = std::trunc(x);
      return t != x && std::fmod(t, 2.0) == 0 ? t + std::copysign(1.0, x) : t;
    }
    default: return std::trunc(x);
  }
}

struct FloatFormat {
  int mant_bits;  // stored fraction bits
  int min_exp;    // exponent of the smallest normal number
  int max_exp;    // exponent of the largest finite number
};
constexpr FloatFormat kF32Format{23, -126, 127};
constexpr FloatFormat kF16Format{10, -14, 15};
constexpr FloatFormat kBF16Format{7, -126, 127};

// x rounded once to the format: a double the format holds exactly, or +-inf. The value is scaled so
// that the format's last place is 1, rounded to an integer, and scaled back (both scalings are exact).
double RoundToFormat(double x, FloatFormat f, RoundMode mode) {
  if (x == 0 || !std::isfinite(x)) return x;
  const int ulp_exp = std::max(std::ilogb(x), f.min_exp) - f.mant_bits;
  const double r = std::ldexp(RoundIntegral(std::ldexp(x, -ulp_exp), mode), ulp_exp);
  if (r == 0) return std::copysign(0.0, x);
  const double max = std::ldexp(2.0 - std::ldexp(1.0, -f.mant_bits), f.max_exp);
  if (std::fabs(r) <= max) return r;
  // Overflow goes to inf when rounding to nearest or away from zero, else to the largest finite value.
  const bool to_inf = mode == RoundMode::Rint || (mode == RoundMode::Ceil && x > 0) || (mode == RoundMode::Floor && x < 0);
  return std::copysign(to_inf ? std::numeric_limits<double>::infinity() : max, x);
}

// A half-representable double (or inf/NaN) as IEEE half bits. NaN keeps its sign and leading payload
// bits and is quiet, as vcvtps2ph makes it.
uint16_t HalfBits(double x) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) return sign | 0x7E00 | static_cast<uint16_t>((BitsOfFloat(static_cast<float>(x)) & 0x7FFFFF) >> 13);
  if (std::isinf(x)) return sign | 0x7C00;
  if (x == 0) return sign;
  const double a = std::fabs(x);
  const int e = std::ilogb(a);
  if (e < kF16Format.min_exp) return sign | static_cast<uint16_t>(std::ldexp(a, 24));  // subnormal
  return sign | static_cast<uint16_t>((e + 15) << 10) | static_cast<uint16_t>(std::ldexp(a, 10 - e) - 1024);
}

// A bfloat16-representable double as bits: the high half of the float. NaN as in ToBF16Bits.
uint16_t BF16Bits(double x) {
  const uint32_t bits = BitsOfFloat(static_cast<float>(x));
  return static_cast<uint16_t>(bits >> 16) | (std::isnan(x) ? 0x40 : 0);
}

// Rounds as the mode says, saturates, and maps NaN to 0.
template <typename T>
T ToInteger(double x, RoundMode mode) {
  if (std::isnan(x)) return 0;
  const double r = RoundIntegral(x, mode);
  if (r <= std::numeric_limits<T>::min()) return std::numeric_limits<T>::min();
  if (r >= std::numeric_limits<T>::max()) return std::numeric_limits<T>::max();
  return static_cast<T>(r);
}

void Encode(ElemType t, void* p, size_t i, double x, RoundMode mode) {
  switch (t) {
    case ElemType::F32: return StoreAt(p, i, static_cast<float>(RoundToFormat(x, kF32Format, mode)));
    case ElemType::F16: return StoreAt(p, i, HalfBits(RoundToFormat(x, kF16Format, mode)));
    case ElemType::BF16: return StoreAt(p, i, BF16Bits(RoundToFormat(x, kBF16Format, mode)));
    case ElemType::I32: return StoreAt(p, i, ToInteger<int32_t>(x, mode));
    case ElemType::I16: return StoreAt(p, i, ToInteger<int16_t>(x, mode));
    case ElemType::I8: return StoreAt(p, i, ToInteger<int8_t>(x, mode));
    case ElemType::U8: return StoreAt(p, i, ToInteger<uint8_t>(x, mode));
  }
}

// Integer narrowing keeps the low bits (conversion to a narrower integer is modular since C++20).
void EncodeWrapped(ElemType t, void* p, size_t i, int64_t v) {
  switch (t) {
    case ElemType::I32: return StoreAt(p, i, static_cast<int32_t>(v));
    case ElemType::I16: return StoreAt(p, i, static_cast<int16_t>(v));
    case ElemType::I8: return StoreAt(p, i, static_cast<int8_t>(v));
    case ElemType::U8: return StoreAt(p, i, static_cast<uint8_t>(v));
    default: return;
  }
}

// Element by element; each element is read before it is written, so dst may be src when the element
// sizes match.
void ConvertScalar(ElemType from, ElemType to, void* dst, const void* src, size_t n, RoundMode mode) {
  if (IsInteger(from) && IsInteger(to)) {
    for (size_t i = 0; i < n; ++i) EncodeWrapped(to, dst, i, DecodeInt(from, src, i));
    return;
  }
  for (size_t i = 0; i < n; ++i) Encode(to, dst, i, Decode(from, src, i), mode);
}

// The vector path where this target has one, else the scalar one. dst and src are disjoint or the same
// array with equal element sizes.
void ConvertElements(ElemType from, ElemType to, void* dst, const void* src, size_t n, RoundMode mode) {
  if (!HWY_DYNAMIC_DISPATCH(ConvertKernel)(from, to, dst, src, n, mode)) ConvertScalar(from, to, dst, src, n, mode);
}

bool Overlaps(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  const auto* pa = static_cast<const char*>(a);
  const auto* pb = static_cast<const char*>(b);
  const std::less<const char*> before;
  return before(pa, pb + b_bytes) && before(pb, pa + a_bytes);
}

}  // namespace

size_t ElemSize(ElemType type) {
  switch (type) {
    case ElemType::F32:
    case ElemType::I32: return 4;
    case ElemType::F16:
    case ElemType::BF16:
    case ElemType::I16: return 2;
    case ElemType::I8:
    case ElemType::U8: return 1;
  }
  return 0;
}

bool Convert(ElemType from, ElemType to, void* dst, const void* src, size_t n, RoundMode mode) {
  if (ElemSize(from) == 0 || ElemSize(to) == 0 || mode > RoundMode::Odd) return false;
  const size_t in_bytes = n * ElemSize(from), out_bytes = n * ElemSize(to);
  if (from == to) {
    std::memmove(dst, src, out_bytes);
    return true;
  }
  mode = Resolve(from, to, mode);
  if (in_bytes == out_bytes || !Overlaps(dst, out_bytes, src, in_bytes)) {
    ConvertElements(from, to, dst, src, n, mode);
    return true;
  }
  // A widening or narrowing conversion in place would overwrite elements not yet read.
  std::vector<unsigned char> out(out_bytes);
  ConvertElements(from, to, out.data(), src, n, mode);
  std::memcpy(dst, out.data(), out_bytes);
  return true;
}

}  // namespace pypto::sim
#endif  // HWY_ONCE
