// The element-wise kernels against std:: functions evaluated in double: unary math (with its error in
// ULPs over wide ranges), binary ops including Max/Min, tile-with-scalar ops, IEEE edge values and
// integer wrap-around, over lengths around every vector width, in place and out of place.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/elementwise.h"

namespace pypto::sim {
namespace {

using kerneltest::Bits;
using kerneltest::FromBits;
using kerneltest::kLengths;
using kerneltest::SameFloat;
using kerneltest::UlpError;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kDenormMin = std::numeric_limits<float>::denorm_min();

constexpr UnaryOp kUnaryOps[] = {UnaryOp::Exp,   UnaryOp::Log,  UnaryOp::Sqrt, UnaryOp::Rsqrt,
                                 UnaryOp::Recip, UnaryOp::Relu, UnaryOp::Abs,  UnaryOp::Neg};
constexpr BinaryOp kBinaryOps[] = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul,
                                   BinaryOp::Div, BinaryOp::Max, BinaryOp::Min};

// The exact result (in double) that each unary op approximates.
double RefUnary(UnaryOp op, float x) {
  const double d = x;
  switch (op) {
    case UnaryOp::Exp: return std::exp(d);
    case UnaryOp::Log: return std::log(d);
    case UnaryOp::Sqrt: return std::sqrt(d);
    case UnaryOp::Rsqrt: return 1.0 / std::sqrt(d);
    case UnaryOp::Recip: return 1.0 / d;
    case UnaryOp::Relu: return d > 0 ? d : (std::isnan(d) ? d : 0.0);
    case UnaryOp::Abs: return std::fabs(d);
    case UnaryOp::Neg: return -d;
    case UnaryOp::Sin: return std::sin(d);
    case UnaryOp::Cos: return std::cos(d);
  }
  return 0;
}

// Allowed error per op. Exp and Log come from hwy/contrib/math: over every float, exp is within
// 1.032 ULP (worst at x = -5.88) and log within 0.904 (DISABLED_ExhaustiveExpLogUlp, AVX2). Rsqrt is
// 1/sqrt(x) in float, rounded twice (sqrt, then the division) exactly as torch computes it on CPU, so
// it can land just past 1 ULP (1.01 seen).
constexpr double kExpUlp = 1.04, kLogUlp = 1.0;

double UlpBound(UnaryOp op) {
  switch (op) {
    case UnaryOp::Exp: return kExpUlp;
    case UnaryOp::Log: return kLogUlp;
    case UnaryOp::Rsqrt: return 1.5;
    default: return 0.5;  // correctly rounded
  }
}

float RefBinary(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::Add: return a + b;
    case BinaryOp::Sub: return a - b;
    case BinaryOp::Mul: return a * b;
    case BinaryOp::Div: return a / b;
    case BinaryOp::Max: return std::isnan(a) || std::isnan(b) ? kNaN : std::max(a, b);
    case BinaryOp::Min: return std::isnan(a) || std::isnan(b) ? kNaN : std::min(a, b);
  }
  return 0;
}

int32_t RefBinaryI32(BinaryOp op, int32_t a, int32_t b) {
  const auto ua = static_cast<uint32_t>(a), ub = static_cast<uint32_t>(b);
  switch (op) {
    case BinaryOp::Add: return static_cast<int32_t>(ua + ub);
    case BinaryOp::Sub: return static_cast<int32_t>(ua - ub);
    case BinaryOp::Mul: return static_cast<int32_t>(ua * ub);
    case BinaryOp::Div: return b == -1 ? static_cast<int32_t>(0u - ua) : a / b;
    case BinaryOp::Max: return std::max(a, b);
    case BinaryOp::Min: return std::min(a, b);
  }
  return 0;
}

// Inputs in each op's domain, varied enough to cover signs and magnitudes.
std::vector<float> InputsFor(UnaryOp op, size_t n) {
  switch (op) {
    case UnaryOp::Exp: return kerneltest::Uniform(n, -80.0f, 80.0f, 1);
    case UnaryOp::Log:
    case UnaryOp::Sqrt:
    case UnaryOp::Rsqrt: return kerneltest::Uniform(n, 1e-30f, 1e30f, 2);
    default: return kerneltest::Uniform(n, -1e4f, 1e4f, 3);
  }
}

// Every float that is special somewhere, positive and negative.
std::vector<float> EdgeValues() {
  std::vector<float> v = {0.0f,   -0.0f, kInf,       -kInf,     kNaN,     -kNaN,     kDenormMin,
                          1e-40f, 1.0f,  -1.0f,      0.5f,      2.0f,     88.72f,    88.7229f,
                          89.0f,  -87.0f, -88.0f,    -100.0f,   -103.9f,  -104.1f,   -200.0f,
                          104.0f, 200.0f, FLT_MAX,   -FLT_MAX,  FLT_MIN,  -FLT_MIN,  1.0f + FLT_EPSILON,
                          1.0f - FLT_EPSILON / 2};
  const size_t n = v.size();
  for (size_t i = 0; i < n; ++i) v.push_back(-v[i]);
  return v;
}

TEST(Elementwise, UnaryF32MatchesStdAllLengthsAndInPlace) {
  for (UnaryOp op : kUnaryOps) {
    for (size_t n : kLengths) {
      const std::vector<float> in = InputsFor(op, n);
      std::vector<float> out(n, -1.0f);
      UnaryF32(op, out.data(), in.data(), n);
      for (size_t i = 0; i < n; ++i)
        ASSERT_LE(UlpError(out[i], RefUnary(op, in[i])), UlpBound(op))
            << "op=" << int(op) << " n=" << n << " x=" << in[i] << " got=" << out[i];
      auto inplace = in;
      UnaryF32(op, inplace.data(), inplace.data(), n);
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(Bits(inplace[i]), Bits(out[i])) << "op=" << int(op) << " i=" << i;
    }
  }
}

TEST(Elementwise, UnaryF32EdgeValuesFollowIeee) {
  const std::vector<float> in = EdgeValues();
  std::vector<float> out(in.size());
  for (UnaryOp op : kUnaryOps) {
    UnaryF32(op, out.data(), in.data(), in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      const double ref = RefUnary(op, in[i]);
      EXPECT_LE(UlpError(out[i], ref), UlpBound(op)) << "op=" << int(op) << " x=" << in[i] << " got=" << out[i];
      if (!std::isnan(ref)) {
        EXPECT_EQ(std::signbit(out[i]), std::signbit(ref)) << "op=" << int(op) << " x=" << in[i];
      }
    }
  }
}

TEST(Elementwise, SignsOfZeroAndNaNPassThrough) {
  const std::vector<float> in = {-0.0f, 0.0f, kNaN, -kNaN};
  std::vector<float> out(in.size());
  UnaryF32(UnaryOp::Relu, out.data(), in.data(), in.size());
  EXPECT_EQ(Bits(out[0]), Bits(0.0f));  // relu(-0) = +0
  EXPECT_TRUE(std::isnan(out[2]) && std::isnan(out[3]));
  UnaryF32(UnaryOp::Abs, out.data(), in.data(), in.size());
  EXPECT_EQ(Bits(out[0]), Bits(0.0f));
  EXPECT_TRUE(std::isnan(out[3]) && !std::signbit(out[3]));
  UnaryF32(UnaryOp::Neg, out.data(), in.data(), in.size());
  EXPECT_EQ(Bits(out[0]), Bits(0.0f));
  EXPECT_EQ(Bits(out[1]), Bits(-0.0f));
  EXPECT_TRUE(std::isnan(out[2]));
  UnaryF32(UnaryOp::Rsqrt, out.data(), in.data(), 2);
  EXPECT_EQ(out[0], -kInf);  // 1/sqrt(-0) = 1/-0
  EXPECT_EQ(out[1], kInf);
}

TEST(Elementwise, PreluScalesNegativesByTheirOwnSlope) {
  const std::vector<float> in = {2.0f, -2.0f, -3.0f, 0.0f, -0.0f, kNaN};
  const std::vector<float> slope = {-1.0f, 0.25f, 1.5f, 4.0f, 4.0f, 2.0f};
  std::vector<float> out(in.size());
  PreluF32(out.data(), in.data(), slope.data(), in.size());
  EXPECT_EQ(out[0], 2.0f);
  EXPECT_EQ(out[1], -0.5f);
  EXPECT_EQ(out[2], -4.5f);
  EXPECT_EQ(Bits(out[3]), Bits(0.0f));
  EXPECT_EQ(Bits(out[4]), Bits(-0.0f));  // -0 * 4 keeps its sign, as torch.where(x > 0, x, x * s)
  EXPECT_TRUE(std::isnan(out[5]));
}

// Maximum error over every `stride`-th float bit pattern in [first, last], against the double-precision
// std:: function. Works in chunks so that an exhaustive sweep needs little memory.
template <class Ref>
double MaxUlpOverBits(UnaryOp op, uint32_t first, uint32_t last, uint32_t stride, Ref ref) {
  constexpr size_t kChunk = 1 << 20;
  std::vector<float> in, out(kChunk);
  double worst = 0;
  for (uint64_t b = first; b <= last;) {
    in.clear();
    for (; b <= last && in.size() < kChunk; b += stride) in.push_back(FromBits(static_cast<uint32_t>(b)));
    UnaryF32(op, out.data(), in.data(), in.size());
    for (size_t i = 0; i < in.size(); ++i) worst = std::max(worst, UlpError(out[i], ref(in[i])));
  }
  return worst;
}

// Sweeps of a few million points across the whole ranges; DISABLED_Exhaustive below covers every float.
TEST(Elementwise, ExpAccurateOverWideRange) {
  const auto ref = [](float x) { return std::exp(static_cast<double>(x)); };
  // [0, 80] and [-80, 0] by bit pattern (dense near zero, as floats are), then the whole domain.
  const double pos = MaxUlpOverBits(UnaryOp::Exp, 0, Bits(80.0f), 257, ref);
  const double neg = MaxUlpOverBits(UnaryOp::Exp, Bits(-0.0f), Bits(-80.0f), 257, ref);
  const double tails = std::max(MaxUlpOverBits(UnaryOp::Exp, Bits(80.0f), Bits(kInf), 101, ref),
                                MaxUlpOverBits(UnaryOp::Exp, Bits(-80.0f), Bits(-kInf), 101, ref));
  std::printf("exp max ULP error: [0, 80] %.3f, [-80, 0] %.3f, beyond (subnormal results, overflow) %.3f\n", pos, neg,
              tails);
  EXPECT_LE(std::max(pos, neg), kExpUlp);
  EXPECT_LE(tails, kExpUlp);
}

TEST(Elementwise, LogAccurateOverPositiveFloats) {
  const auto ref = [](float x) { return std::log(static_cast<double>(x)); };
  const double subnormal = MaxUlpOverBits(UnaryOp::Log, 1, Bits(FLT_MIN), 97, ref);
  const double normal = MaxUlpOverBits(UnaryOp::Log, Bits(FLT_MIN), Bits(FLT_MAX), 509, ref);
  const double near_one = MaxUlpOverBits(UnaryOp::Log, Bits(0.5f), Bits(2.0f), 3, ref);
  std::printf("log max ULP error: subnormals %.3f, normals %.3f, [0.5, 2] %.3f\n", subnormal, normal, near_one);
  EXPECT_LE(std::max({subnormal, normal, near_one}), kLogUlp);
}

// Every float (2^32 of them): about 3 CPU-minutes. Run with --gtest_also_run_disabled_tests.
TEST(Elementwise, DISABLED_ExhaustiveExpLogUlp) {
  const double exp_err = std::max(
      MaxUlpOverBits(UnaryOp::Exp, 0, 0x7F800000u, 1, [](float x) { return std::exp(double{x}); }),
      MaxUlpOverBits(UnaryOp::Exp, 0x80000000u, 0xFF800000u, 1, [](float x) { return std::exp(double{x}); }));
  const double log_err =
      MaxUlpOverBits(UnaryOp::Log, 0, 0x7F800000u, 1, [](float x) { return std::log(double{x}); });
  std::printf("exhaustive max ULP error: exp %.4f, log %.4f\n", exp_err, log_err);
  EXPECT_LE(exp_err, kExpUlp);
  EXPECT_LE(log_err, kLogUlp);
}

TEST(Elementwise, UnaryI32ReluAbsNegWrap) {
  const std::vector<int32_t> in = {0, 1, -1, 7, -7, INT32_MAX, INT32_MIN, INT32_MIN + 1, 12345, -98765};
  for (size_t n = 0; n <= in.size(); ++n) {
    std::vector<int32_t> relu(n), abs(n), neg(n);
    ASSERT_TRUE(UnaryI32(UnaryOp::Relu, relu.data(), in.data(), n));
    ASSERT_TRUE(UnaryI32(UnaryOp::Abs, abs.data(), in.data(), n));
    ASSERT_TRUE(UnaryI32(UnaryOp::Neg, neg.data(), in.data(), n));
    for (size_t i = 0; i < n; ++i) {
      const uint32_t u = static_cast<uint32_t>(in[i]);
      EXPECT_EQ(relu[i], std::max(in[i], 0));
      EXPECT_EQ(abs[i], in[i] < 0 ? static_cast<int32_t>(0u - u) : in[i]);  // |INT32_MIN| wraps
      EXPECT_EQ(neg[i], static_cast<int32_t>(0u - u));
    }
  }
  std::vector<int32_t> big = kerneltest::UniformInt(1000, INT32_MIN, INT32_MAX, 4), copy = big;
  ASSERT_TRUE(UnaryI32(UnaryOp::Neg, big.data(), big.data(), big.size()));  // in place
  for (size_t i = 0; i < big.size(); ++i) EXPECT_EQ(big[i], static_cast<int32_t>(0u - static_cast<uint32_t>(copy[i])));
}

TEST(Elementwise, UnaryI32RejectsFloatOnlyOps) {
  std::vector<int32_t> in = {4, 9}, out = {-5, -5};
  for (UnaryOp op :
       {UnaryOp::Exp, UnaryOp::Log, UnaryOp::Sqrt, UnaryOp::Rsqrt, UnaryOp::Recip, UnaryOp::Sin, UnaryOp::Cos}) {
    EXPECT_FALSE(UnaryI32(op, out.data(), in.data(), in.size()));
    EXPECT_EQ(out, (std::vector<int32_t>{-5, -5}));
  }
}

TEST(Elementwise, BinaryF32AllOpsLengthsAndAliasing) {
  for (BinaryOp op : kBinaryOps) {
    for (size_t n : kLengths) {
      auto a = kerneltest::Uniform(n, -100.0f, 100.0f, 5);
      auto b = kerneltest::Uniform(n, -100.0f, 100.0f, 6);
      std::vector<float> out(n);
      BinaryF32(op, out.data(), a.data(), b.data(), n);
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], RefBinary(op, a[i], b[i])) << "op=" << int(op) << " i=" << i;
      auto in_a = a;
      BinaryF32(op, in_a.data(), in_a.data(), b.data(), n);
      EXPECT_EQ(in_a, out);
      auto in_b = b;
      BinaryF32(op, in_b.data(), a.data(), in_b.data(), n);
      EXPECT_EQ(in_b, out);
    }
  }
}

TEST(Elementwise, MaxMinPropagateNaNFromEitherSide) {
  // Enough lanes that NaN shows up both in full vectors and in the tail.
  std::vector<float> a(37, 1.0f), b(37, 2.0f), out(37);
  a[3] = kNaN;
  b[5] = kNaN;
  a[36] = kNaN;
  b[35] = -kInf;
  for (BinaryOp op : {BinaryOp::Max, BinaryOp::Min}) {
    BinaryF32(op, out.data(), a.data(), b.data(), a.size());
    for (size_t i = 0; i < a.size(); ++i)
      EXPECT_TRUE(SameFloat(out[i], RefBinary(op, a[i], b[i]))) << "op=" << int(op) << " i=" << i;
    BinaryScalarF32(op, out.data(), a.data(), kNaN, a.size());
    for (float v : out) EXPECT_TRUE(std::isnan(v));
  }
}

TEST(Elementwise, BinaryI32MaxMinAndWrap) {
  for (size_t n : kLengths) {
    auto a = kerneltest::UniformInt(n, INT32_MIN, INT32_MAX, 7);
    auto b = kerneltest::UniformInt(n, INT32_MIN, INT32_MAX, 8);
    for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Max, BinaryOp::Min}) {
      std::vector<int32_t> out(n);
      ASSERT_TRUE(BinaryI32(op, out.data(), a.data(), b.data(), n));
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], RefBinaryI32(op, a[i], b[i])) << "op=" << int(op);
    }
  }
}

TEST(Elementwise, BinaryScalarF32AllOpsAndInPlace) {
  for (BinaryOp op : kBinaryOps) {
    for (float s : {2.5f, -0.75f, 0.0f, kInf}) {
      for (size_t n : kLengths) {
        auto a = kerneltest::Uniform(n, -50.0f, 50.0f, 9);
        std::vector<float> out(n);
        BinaryScalarF32(op, out.data(), a.data(), s, n);
        for (size_t i = 0; i < n; ++i)
          ASSERT_TRUE(SameFloat(out[i], RefBinary(op, a[i], s))) << "op=" << int(op) << " s=" << s << " i=" << i;
        BinaryScalarF32(op, a.data(), a.data(), s, n);
        for (size_t i = 0; i < n; ++i) ASSERT_EQ(Bits(a[i]), Bits(out[i]));
      }
    }
  }
}

TEST(Elementwise, BinaryScalarI32AllOpsAndDivisionByZero) {
  for (BinaryOp op : kBinaryOps) {
    for (int32_t s : {3, -1, -7, INT32_MIN, INT32_MAX}) {
      for (size_t n : kLengths) {
        auto a = kerneltest::UniformInt(n, INT32_MIN, INT32_MAX, 10);
        if (n > 2) a[1] = INT32_MIN;  // INT32_MIN / -1 and friends
        std::vector<int32_t> out(n);
        ASSERT_TRUE(BinaryScalarI32(op, out.data(), a.data(), s, n));
        for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], RefBinaryI32(op, a[i], s)) << "op=" << int(op) << " s=" << s;
      }
    }
  }
  std::vector<int32_t> a = {1, 2, 3}, out = {9, 9, 9};
  EXPECT_FALSE(BinaryScalarI32(BinaryOp::Div, out.data(), a.data(), 0, a.size()));
  EXPECT_EQ(out, (std::vector<int32_t>{9, 9, 9}));  // nothing written
  EXPECT_TRUE(BinaryScalarI32(BinaryOp::Mul, out.data(), a.data(), 0, a.size()));
}

// Sin and Cos round the double-precision result once: correctly rounded in practice over several
// periods and at large arguments; inf and NaN give NaN.
TEST(Elementwise, SinCosCorrectlyRoundedAndNaNOutsideTheDomain) {
  for (UnaryOp op : {UnaryOp::Sin, UnaryOp::Cos}) {
    const auto ref = [op](float x) { return RefUnary(op, x); };
    for (size_t n : kLengths) {
      const auto in = kerneltest::Uniform(n, -20.0f, 20.0f, 11);
      std::vector<float> out(n);
      UnaryF32(op, out.data(), in.data(), n);
      for (size_t i = 0; i < n; ++i) ASSERT_LE(UlpError(out[i], ref(in[i])), 0.5) << "x=" << in[i];
    }
    const std::vector<float> edges = {0.0f, -0.0f, 1e6f, -3e7f, FLT_MAX, kInf, -kInf, kNaN};
    std::vector<float> out(edges.size());
    UnaryF32(op, out.data(), edges.data(), edges.size());
    for (size_t i = 0; i < 5; ++i) EXPECT_LE(UlpError(out[i], ref(edges[i])), 0.5) << "x=" << edges[i];
    for (size_t i = 5; i < edges.size(); ++i) EXPECT_TRUE(std::isnan(out[i])) << "x=" << edges[i];
  }
  std::vector<float> zeros = {0.0f, -0.0f}, out(2);
  UnaryF32(UnaryOp::Sin, out.data(), zeros.data(), 2);
  EXPECT_EQ(Bits(out[1]), Bits(-0.0f));  // sin(-0) = -0
}

// x > 0 ? x : slope * x for slopes below, at and above 1, negative and zero; in place as well.
TEST(Elementwise, LeakyReluScalesOnlyTheNonPositiveSide) {
  for (float slope : {0.0f, 0.1f, 1.0f, -0.5f, 2.0f}) {
    for (size_t n : kLengths) {
      const auto in = kerneltest::Uniform(n, -50.0f, 50.0f, 12);
      std::vector<float> out(n);
      LeakyReluF32(out.data(), in.data(), slope, n);
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], in[i] > 0 ? in[i] : slope * in[i]) << "x=" << in[i];
      auto inplace = in;
      LeakyReluF32(inplace.data(), inplace.data(), slope, n);
      ASSERT_EQ(inplace, out);
    }
  }
  const std::vector<float> in = {kNaN, -0.0f, kInf, -kInf};
  std::vector<float> out(in.size());
  LeakyReluF32(out.data(), in.data(), 0.5f, in.size());
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_EQ(Bits(out[1]), Bits(-0.0f));
  EXPECT_EQ(out[2], kInf);
  EXPECT_EQ(out[3], -kInf);
}

TEST(Elementwise, BitwiseNotInvertsEveryBit) {
  const std::vector<int16_t> in = {0, -1, 1, 0x7fff, -0x8000, 0x1234};
  std::vector<int16_t> out(in.size(), 7);
  BitwiseNot(out.data(), in.data(), in.size() * sizeof(int16_t));
  EXPECT_EQ(out, (std::vector<int16_t>{-1, 0, -2, -0x8000, 0x7fff, static_cast<int16_t>(~0x1234)}));
  std::vector<uint16_t> u = {0, 0xffff, 0x00f0};
  BitwiseNot(u.data(), u.data(), u.size() * sizeof(uint16_t));
  EXPECT_EQ(u, (std::vector<uint16_t>{0xffff, 0, 0xff0f}));
}

}  // namespace
}  // namespace pypto::sim
