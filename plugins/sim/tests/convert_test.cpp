// Conversions against independent references: half and bfloat16 rounding is checked against a table
// of every representable value (picking neighbours by the mode's rule), float -> integer against
// std:: rounding in double, integer -> float against nextafter neighbours. Covers every mode, NaN,
// inf, signed zeros, subnormals, overflow, ragged lengths and in-place conversion.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/convert.h"

namespace pypto::sim {
namespace {

using kerneltest::Bits;
using kerneltest::FromBits;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr RoundMode kModes[] = {RoundMode::None,  RoundMode::Rint,  RoundMode::Round, RoundMode::Floor,
                                RoundMode::Ceil,  RoundMode::Trunc, RoundMode::Odd};

// ---- A 16-bit float format, described by its fields ---------------------------------------------

struct Format16 {
  int exp_bits, mant_bits;
  int bias() const { return (1 << (exp_bits - 1)) - 1; }
  uint16_t inf_bits() const { return static_cast<uint16_t>(((1 << exp_bits) - 1) << mant_bits); }

  // The value of a bit pattern, from the IEEE field definitions.
  double Decode(uint16_t h) const {
    const int e = (h >> mant_bits) & ((1 << exp_bits) - 1);
    const int m = h & ((1 << mant_bits) - 1);
    const double sign = (h & 0x8000) ? -1 : 1;
    if (e == (1 << exp_bits) - 1) return m ? NAN : sign * INFINITY;
    if (e == 0) return sign * std::ldexp(m, 1 - bias() - mant_bits);
    return sign * std::ldexp((1 << mant_bits) + m, e - bias() - mant_bits);
  }
};
constexpr Format16 kHalf{5, 10};
constexpr Format16 kBFloat{8, 7};

// x rounded to the format by searching the sorted table of its non-negative finite values.
class Rounder {
 public:
  explicit Rounder(Format16 f) : f_(f) {
    for (uint32_t h = 0; h < f.inf_bits(); ++h) values_.push_back(f.Decode(static_cast<uint16_t>(h)));
  }

  uint16_t Round(double x, RoundMode mode) const {
    const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    const double a = std::fabs(x);
    if (std::isinf(a)) return sign | f_.inf_bits();
    // Mirror the directed modes for negative x so that "up" means away from zero.
    if (sign && mode == RoundMode::Floor) mode = RoundMode::Ceil;
    else if (sign && mode == RoundMode::Ceil) mode = RoundMode::Floor;
    const auto hi_it = std::lower_bound(values_.begin(), values_.end(), a);
    if (hi_it != values_.end() && *hi_it == a) return sign | static_cast<uint16_t>(hi_it - values_.begin());
    const auto lo = static_cast<uint16_t>(hi_it - values_.begin() - 1);  // a > 0 here
    // Past the largest finite value, "hi" is infinity, standing at the next power of two.
    const bool past_max = hi_it == values_.end();
    const uint16_t hi = past_max ? f_.inf_bits() : static_cast<uint16_t>(lo + 1);
    const double hi_value = past_max ? std::ldexp(1.0, f_.bias() + 1) : values_[hi];
    uint16_t pick;
    switch (mode) {
      case RoundMode::Floor:  // toward zero, for magnitudes
      case RoundMode::Trunc: pick = lo; break;
      case RoundMode::Ceil: pick = hi; break;
      case RoundMode::Odd: pick = (lo & 1) ? lo : hi; break;
      default: {  // nearest, ties to the even pattern
        const double dlo = a - values_[lo], dhi = hi_value - a;
        pick = dlo < dhi ? lo : dhi < dlo ? hi : ((lo & 1) ? hi : lo);
      }
    }
    return sign | pick;
  }

 private:
  Format16 f_;
  std::vector<double> values_;
};

const Rounder& HalfRounder() {
  static const Rounder r(kHalf);
  return r;
}
const Rounder& BFloatRounder() {
  static const Rounder r(kBFloat);
  return r;
}

// The mode F32 -> F16/BF16 applies, per convert.h.
RoundMode NarrowFloatMode(RoundMode m) { return m == RoundMode::None || m == RoundMode::Round ? RoundMode::Rint : m; }

// Floats that stress 16-bit rounding: specials, both formats' boundaries (max, overflow threshold,
// smallest subnormal, half of it), exact ties, and many random bit patterns.
std::vector<float> NarrowingInputs() {
  std::vector<float> v = {0.0f, 1.0f, 1.5f, 65504.0f, 65519.99f, 65520.0f, 65536.0f, 1e6f, FLT_MAX, kInf,
                          std::ldexp(1.0f, -24), std::ldexp(1.0f, -25), std::ldexp(1.5f, -25), std::ldexp(1.0f, -26),
                          std::ldexp(1.0f, -14), std::ldexp(1023.5f, -24), std::ldexp(1.0f, -133),
                          std::ldexp(1.0f, -134), FLT_MIN, std::numeric_limits<float>::denorm_min(),
                          FromBits(0x3F808000u), FromBits(0x3F818000u), FromBits(0x3F808001u), FromBits(0x7F7F8000u),
                          FromBits(0x7F7F7FFFu), 1.0f + std::ldexp(1.0f, -11), 1.0f + 3 * std::ldexp(1.0f, -11)};
  std::mt19937 rng(51);
  for (int i = 0; i < 200000; ++i) {
    const float f = FromBits(static_cast<uint32_t>(rng()));
    if (!std::isnan(f)) v.push_back(f);
  }
  // Dense around the half range, where most half conversions happen.
  for (float x : kerneltest::Uniform(20000, -70000.0f, 70000.0f, 52)) v.push_back(x);
  for (float x : kerneltest::Uniform(20000, -1e-3f, 1e-3f, 53)) v.push_back(x);
  const size_t n = v.size();
  for (size_t i = 0; i < n; ++i) v.push_back(-v[i]);
  return v;
}

TEST(Convert, F32ToHalfAndBFloatEveryMode) {
  const auto in = NarrowingInputs();
  std::vector<uint16_t> out(in.size());
  for (auto [type, rounder, name] : {std::tuple{ElemType::F16, &HalfRounder(), "f16"},
                                     std::tuple{ElemType::BF16, &BFloatRounder(), "bf16"}}) {
    for (RoundMode mode : kModes) {
      ASSERT_TRUE(Convert(ElemType::F32, type, out.data(), in.data(), in.size(), mode));
      int failures = 0;
      for (size_t i = 0; i < in.size() && failures < 10; ++i) {
        const uint16_t want = rounder->Round(in[i], NarrowFloatMode(mode));
        if (out[i] != want) {
          ++failures;
          ADD_FAILURE() << name << " mode=" << int(mode) << " x=" << in[i] << " (0x" << std::hex << Bits(in[i])
                        << ") got 0x" << out[i] << " want 0x" << want;
        }
      }
    }
  }
}

// NaN stays NaN with its sign, made quiet, in both directions and every mode.
TEST(Convert, NaNSurvivesNarrowingAndWidening) {
  const std::vector<float> nans = {FromBits(0x7FC00000u), FromBits(0xFFC00000u), FromBits(0x7F800001u),
                                   FromBits(0x7FA00000u), FromBits(0xFFFFFFFFu)};
  std::vector<uint16_t> half(nans.size());
  std::vector<float> back(nans.size());
  for (auto [type, f] : {std::pair{ElemType::F16, kHalf}, std::pair{ElemType::BF16, kBFloat}}) {
    for (RoundMode mode : kModes) {
      ASSERT_TRUE(Convert(ElemType::F32, type, half.data(), nans.data(), nans.size(), mode));
      ASSERT_TRUE(Convert(type, ElemType::F32, back.data(), half.data(), half.size(), mode));
      for (size_t i = 0; i < nans.size(); ++i) {
        EXPECT_TRUE(std::isnan(f.Decode(half[i]))) << std::hex << half[i];
        EXPECT_TRUE(half[i] & (1u << (f.mant_bits - 1))) << "quiet bit, " << std::hex << half[i];
        EXPECT_EQ(half[i] >> 15, Bits(nans[i]) >> 31);
        EXPECT_TRUE(std::isnan(back[i]));
        EXPECT_EQ(std::signbit(back[i]), std::signbit(nans[i]));
      }
    }
  }
}

// Every 16-bit pattern widens exactly.
TEST(Convert, HalfAndBFloatWidenExactly) {
  std::vector<uint16_t> all(65536);
  for (uint32_t h = 0; h < all.size(); ++h) all[h] = static_cast<uint16_t>(h);
  std::vector<float> out(all.size());
  for (auto [type, f] : {std::pair{ElemType::F16, kHalf}, std::pair{ElemType::BF16, kBFloat}}) {
    ASSERT_TRUE(Convert(type, ElemType::F32, out.data(), all.data(), all.size(), RoundMode::None));
    for (uint32_t h = 0; h < all.size(); ++h) {
      const double want = f.Decode(static_cast<uint16_t>(h));
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(out[h])) << std::hex << h;
      } else {
        ASSERT_EQ(out[h], want) << std::hex << h;
        ASSERT_EQ(std::signbit(out[h]), (h & 0x8000) != 0) << std::hex << h;
      }
    }
  }
}

// float -> integer: round in double with the std:: function the mode names, saturate, NaN -> 0.
template <typename T>
T RefToInt(double x, RoundMode mode) {
  if (std::isnan(x)) return 0;
  double r;
  switch (mode) {
    case RoundMode::Rint:
    case RoundMode::Odd: r = std::nearbyint(x); break;  // default environment: ties to even
    case RoundMode::Round: r = std::round(x); break;
    case RoundMode::Floor: r = std::floor(x); break;
    case RoundMode::Ceil: r = std::ceil(x); break;
    default: r = std::trunc(x); break;  // None and Trunc
  }
  return static_cast<T>(std::clamp<double>(r, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
}

std::vector<float> ToIntInputs() {
  std::vector<float> v = {0.0f,    -0.0f,   0.5f,     1.5f,      2.5f,      0.49999997f, 1.0f,      127.5f,
                          128.0f,  255.5f,  256.0f,   32767.5f,  32768.0f,  65535.0f,    2147483520.0f, 2147483648.0f,
                          1e10f,   kInf,    NAN,      FLT_MAX,   8388607.5f, 8388608.0f, 16777217.0f,  1e-45f};
  for (float x : kerneltest::Uniform(5000, -300.0f, 300.0f, 54)) v.push_back(x);
  for (float x : kerneltest::Uniform(5000, -3e9f, 3e9f, 55)) v.push_back(x);
  for (int i = -40; i <= 40; ++i) v.push_back(i * 0.5f);  // every tie
  const size_t n = v.size();
  for (size_t i = 0; i < n; ++i) v.push_back(-v[i]);
  return v;
}

template <typename T>
void CheckFloatToInt(ElemType from, ElemType to, const std::vector<float>& values) {
  // Sources other than F32 get the values rounded to their own precision first.
  std::vector<uint16_t> narrow(values.size());
  std::vector<double> exact(values.size());
  const void* src = values.data();
  if (from != ElemType::F32) {
    ASSERT_TRUE(Convert(ElemType::F32, from, narrow.data(), values.data(), values.size(), RoundMode::Rint));
    const Format16 f = from == ElemType::F16 ? kHalf : kBFloat;
    for (size_t i = 0; i < values.size(); ++i) exact[i] = f.Decode(narrow[i]);
    src = narrow.data();
  } else {
    for (size_t i = 0; i < values.size(); ++i) exact[i] = values[i];
  }
  std::vector<T> out(values.size());
  for (RoundMode mode : kModes) {
    ASSERT_TRUE(Convert(from, to, out.data(), src, values.size(), mode));
    for (size_t i = 0; i < values.size(); ++i)
      ASSERT_EQ(out[i], RefToInt<T>(exact[i], mode)) << "from=" << int(from) << " to=" << int(to)
                                                      << " mode=" << int(mode) << " x=" << exact[i];
  }
}

TEST(Convert, FloatToIntegersEveryModeSaturating) {
  const auto in = ToIntInputs();
  for (ElemType from : {ElemType::F32, ElemType::F16, ElemType::BF16}) {
    CheckFloatToInt<int32_t>(from, ElemType::I32, in);
    CheckFloatToInt<int16_t>(from, ElemType::I16, in);
    CheckFloatToInt<int8_t>(from, ElemType::I8, in);
    CheckFloatToInt<uint8_t>(from, ElemType::U8, in);
  }
}

// int -> F32 (and -> half/bfloat16): the neighbours of the exact value, picked by the mode.
float RefIntToF32(int64_t x, RoundMode mode) {
  const double d = static_cast<double>(x);
  const float near = static_cast<float>(d);  // nearest, ties to even
  if (near == d) return near;
  const float lo = near < d ? near : std::nextafter(near, -kInf);
  const float hi = std::nextafter(lo, kInf);
  switch (mode) {
    case RoundMode::Floor: return lo;
    case RoundMode::Ceil: return hi;
    case RoundMode::Trunc: return x < 0 ? hi : lo;
    default: return near;  // None, Rint, Round and Odd (Odd only rounds to odd from F32)
  }
}

TEST(Convert, IntegersToFloatEveryMode) {
  auto ints = kerneltest::UniformInt(5000, INT32_MIN, INT32_MAX, 56);
  for (int64_t x : {0LL, 1LL, -1LL, 16777216LL, 16777217LL, 16777219LL, 2147483647LL, -2147483648LL, 65504LL, 65519LL,
                    65520LL, 70000LL, -70000LL})
    ints.push_back(static_cast<int32_t>(x));
  std::vector<float> out(ints.size());
  std::vector<uint16_t> half(ints.size());
  for (RoundMode mode : kModes) {
    ASSERT_TRUE(Convert(ElemType::I32, ElemType::F32, out.data(), ints.data(), ints.size(), mode));
    for (size_t i = 0; i < ints.size(); ++i)
      ASSERT_EQ(out[i], RefIntToF32(ints[i], mode)) << "mode=" << int(mode) << " x=" << ints[i];
    ASSERT_TRUE(Convert(ElemType::I32, ElemType::F16, half.data(), ints.data(), ints.size(), mode));
    const RoundMode m = mode == RoundMode::Odd ? RoundMode::Rint : NarrowFloatMode(mode);
    for (size_t i = 0; i < ints.size(); ++i)
      ASSERT_EQ(half[i], HalfRounder().Round(static_cast<double>(ints[i]), m)) << "mode=" << int(mode) << " x=" << ints[i];
  }
  // Narrow integer sources go through the same rules (and are all exact in F32).
  const std::vector<int8_t> i8 = {-128, -1, 0, 1, 127};
  const std::vector<uint8_t> u8 = {0, 1, 128, 255, 7};
  std::vector<float> f(5);
  ASSERT_TRUE(Convert(ElemType::I8, ElemType::F32, f.data(), i8.data(), 5, RoundMode::None));
  EXPECT_EQ(f, (std::vector<float>{-128, -1, 0, 1, 127}));
  ASSERT_TRUE(Convert(ElemType::U8, ElemType::F32, f.data(), u8.data(), 5, RoundMode::None));
  EXPECT_EQ(f, (std::vector<float>{0, 1, 128, 255, 7}));
}

TEST(Convert, IntegerNarrowingWrapsAndWideningExtends) {
  const std::vector<int32_t> in = {0, 1, -1, 127, 128, 255, 256, -129, 32767, 32768, -32769, INT32_MIN, INT32_MAX};
  std::vector<int16_t> i16(in.size());
  std::vector<int8_t> i8(in.size());
  std::vector<uint8_t> u8(in.size());
  ASSERT_TRUE(Convert(ElemType::I32, ElemType::I16, i16.data(), in.data(), in.size(), RoundMode::None));
  ASSERT_TRUE(Convert(ElemType::I32, ElemType::I8, i8.data(), in.data(), in.size(), RoundMode::Rint));
  ASSERT_TRUE(Convert(ElemType::I32, ElemType::U8, u8.data(), in.data(), in.size(), RoundMode::Floor));
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(i16[i], static_cast<int16_t>(in[i]));
    EXPECT_EQ(i8[i], static_cast<int8_t>(in[i]));
    EXPECT_EQ(u8[i], static_cast<uint8_t>(in[i]));
  }
  std::vector<int32_t> wide(in.size());
  ASSERT_TRUE(Convert(ElemType::I8, ElemType::I32, wide.data(), i8.data(), i8.size(), RoundMode::None));
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(wide[i], i8[i]);
  ASSERT_TRUE(Convert(ElemType::U8, ElemType::I16, i16.data(), u8.data(), u8.size(), RoundMode::None));
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(i16[i], u8[i]);
}

// Half <-> bfloat16 (no vector path): one rounding from the exact value.
TEST(Convert, HalfToBFloatAndBack) {
  std::vector<uint16_t> all(65536), out(65536);
  for (uint32_t h = 0; h < all.size(); ++h) all[h] = static_cast<uint16_t>(h);
  for (RoundMode mode : kModes) {
    ASSERT_TRUE(Convert(ElemType::F16, ElemType::BF16, out.data(), all.data(), all.size(), mode));
    const RoundMode m = NarrowFloatMode(mode == RoundMode::Odd ? RoundMode::Rint : mode);
    for (uint32_t h = 0; h < all.size(); ++h) {
      const double x = kHalf.Decode(static_cast<uint16_t>(h));
      if (std::isnan(x)) {
        ASSERT_TRUE(std::isnan(kBFloat.Decode(out[h])));
      } else {
        ASSERT_EQ(out[h], BFloatRounder().Round(x, m)) << "mode=" << int(mode) << " h=0x" << std::hex << h;
      }
    }
    ASSERT_TRUE(Convert(ElemType::BF16, ElemType::F16, out.data(), all.data(), all.size(), mode));
    for (uint32_t h = 0; h < all.size(); ++h) {
      const double x = kBFloat.Decode(static_cast<uint16_t>(h));
      if (std::isnan(x)) {
        ASSERT_TRUE(std::isnan(kHalf.Decode(out[h])));
      } else {
        ASSERT_EQ(out[h], HalfRounder().Round(x, m)) << "mode=" << int(mode) << " h=0x" << std::hex << h;
      }
    }
  }
}

// Ragged lengths give the same elements as one long call (tails take the vector path too), and a
// conversion in place, widening or narrowing, gives what it gives out of place.
TEST(Convert, LengthsAndInPlace) {
  const auto values = kerneltest::Uniform(1000, -40000.0f, 40000.0f, 57);
  std::vector<uint16_t> whole(values.size());
  ASSERT_TRUE(Convert(ElemType::F32, ElemType::F16, whole.data(), values.data(), values.size(), RoundMode::Rint));
  std::vector<int32_t> whole_i(values.size());
  ASSERT_TRUE(Convert(ElemType::F32, ElemType::I32, whole_i.data(), values.data(), values.size(), RoundMode::Round));
  for (size_t n : kerneltest::kLengths) {
    std::vector<uint16_t> part(n + 1, 0xABCD);
    ASSERT_TRUE(Convert(ElemType::F32, ElemType::F16, part.data(), values.data(), n, RoundMode::Rint));
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(part[i], whole[i]);
    EXPECT_EQ(part[n], 0xABCD);  // nothing past n
    std::vector<int32_t> part_i(n + 1, 77);
    ASSERT_TRUE(Convert(ElemType::F32, ElemType::I32, part_i.data(), values.data(), n, RoundMode::Round));
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(part_i[i], whole_i[i]);
    EXPECT_EQ(part_i[n], 77);
  }

  // Widening F16 -> F32 in one buffer, the halves at its start.
  std::vector<float> buf(values.size());
  std::memcpy(buf.data(), whole.data(), whole.size() * sizeof(uint16_t));
  ASSERT_TRUE(Convert(ElemType::F16, ElemType::F32, buf.data(), buf.data(), values.size(), RoundMode::None));
  std::vector<float> widened(values.size());
  ASSERT_TRUE(Convert(ElemType::F16, ElemType::F32, widened.data(), whole.data(), whole.size(), RoundMode::None));
  EXPECT_EQ(buf, widened);
  // Narrowing back in place.
  ASSERT_TRUE(Convert(ElemType::F32, ElemType::F16, buf.data(), buf.data(), values.size(), RoundMode::Rint));
  EXPECT_EQ(std::memcmp(buf.data(), whole.data(), whole.size() * sizeof(uint16_t)), 0);
  // Same size in place: F32 -> I32 over itself.
  std::vector<float> same = values;
  ASSERT_TRUE(Convert(ElemType::F32, ElemType::I32, same.data(), same.data(), same.size(), RoundMode::Round));
  EXPECT_EQ(std::memcmp(same.data(), whole_i.data(), whole_i.size() * sizeof(int32_t)), 0);
  // Identity conversion copies.
  std::vector<float> copy(values.size());
  ASSERT_TRUE(Convert(ElemType::F32, ElemType::F32, copy.data(), values.data(), values.size(), RoundMode::Floor));
  EXPECT_EQ(copy, values);
}

TEST(Convert, RejectsUnknownEnums) {
  float x = 1, y = 0;
  EXPECT_FALSE(Convert(static_cast<ElemType>(99), ElemType::F32, &y, &x, 1, RoundMode::None));
  EXPECT_FALSE(Convert(ElemType::F32, ElemType::I32, &y, &x, 1, static_cast<RoundMode>(42)));
  EXPECT_EQ(ElemSize(ElemType::BF16), 2u);
  EXPECT_EQ(ElemSize(ElemType::U8), 1u);
}

}  // namespace
}  // namespace pypto::sim
