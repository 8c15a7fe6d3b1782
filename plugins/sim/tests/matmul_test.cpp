// Matrix products against a double-precision triple loop: ragged sizes, accumulation, C aliasing A
// or B, an empty inner dimension, half-precision inputs, and concurrent callers on host threads.
// INT8 products against an int64 triple loop: exact, transposed operands, int32 wrap-around.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <thread>
#include <tuple>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/convert.h"
#include "kernels/matmul.h"

namespace pypto::sim {
namespace {

// C (+)= A * B in double, and the scale of each entry's rounding error: sum_k |a||b|.
void Ref(const std::vector<float>& a, const std::vector<float>& b, size_t m, size_t k, size_t n,
         std::vector<double>& c, std::vector<double>& scale) {
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      double sum = 0, mag = 0;
      for (size_t p = 0; p < k; ++p) {
        const double prod = double{a[i * k + p]} * double{b[p * n + j]};
        sum += prod;
        mag += std::fabs(prod);
      }
      c[i * n + j] += sum;
      scale[i * n + j] += mag;
    }
  }
}

void ExpectNear(const std::vector<float>& got, const std::vector<double>& want, const std::vector<double>& scale) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-5 * scale[i] + 1e-30) << "i=" << i;
}

constexpr std::tuple<size_t, size_t, size_t> kSizes[] = {
    {1, 1, 1}, {7, 33, 5}, {16, 16, 16}, {64, 129, 33}, {128, 128, 128}, {3, 300, 1}};

TEST(Matmul, F32MatchesDoubleAndAccumulates) {
  for (auto [m, k, n] : kSizes) {
    const auto a = kerneltest::Uniform(m * k, -1.0f, 1.0f, 41);
    const auto b = kerneltest::Uniform(k * n, -1.0f, 1.0f, 42);
    const auto c0 = kerneltest::Uniform(m * n, -5.0f, 5.0f, 43);
    std::vector<double> want(m * n, 0.0), scale(m * n, 0.0);
    Ref(a, b, m, k, n, want, scale);

    std::vector<float> c = c0;  // overwritten: the old contents must not leak in
    MatmulF32(c.data(), a.data(), b.data(), m, k, n, /*accumulate=*/false);
    ExpectNear(c, want, scale);

    c = c0;
    MatmulF32(c.data(), a.data(), b.data(), m, k, n, /*accumulate=*/true);
    for (size_t i = 0; i < m * n; ++i) {
      want[i] += c0[i];
      scale[i] += std::fabs(c0[i]);
    }
    ExpectNear(c, want, scale);
  }
}

TEST(Matmul, COverwritesAnOperand) {
  constexpr size_t kN = 33;  // square, so C may take A's or B's place
  const auto a = kerneltest::Uniform(kN * kN, -1.0f, 1.0f, 44);
  const auto b = kerneltest::Uniform(kN * kN, -1.0f, 1.0f, 45);
  std::vector<float> want(kN * kN);
  MatmulF32(want.data(), a.data(), b.data(), kN, kN, kN, false);
  auto in_a = a;
  MatmulF32(in_a.data(), in_a.data(), b.data(), kN, kN, kN, false);
  EXPECT_EQ(in_a, want);
  auto in_b = b;
  MatmulF32(in_b.data(), a.data(), in_b.data(), kN, kN, kN, false);
  EXPECT_EQ(in_b, want);
  // C += A * C.
  std::vector<float> acc = b;
  MatmulF32(acc.data(), a.data(), b.data(), kN, kN, kN, true);
  auto in_c = b;
  MatmulF32(in_c.data(), a.data(), in_c.data(), kN, kN, kN, true);
  EXPECT_EQ(in_c, acc);
}

TEST(Matmul, EmptyInnerDimension) {
  std::vector<float> c(6, 2.0f);
  MatmulF32(c.data(), nullptr, nullptr, 2, 0, 3, true);
  EXPECT_EQ(c, std::vector<float>(6, 2.0f));
  MatmulF32(c.data(), nullptr, nullptr, 2, 0, 3, false);
  EXPECT_EQ(c, std::vector<float>(6, 0.0f));
}

// A contraction narrowed to its first k of K elements (a tile's valid K): A's rows and B's rows (or,
// transposed, A's and B's columns) are stored K long, and the product reads the first k of each.
TEST(Matmul, StridedOperandsSumTheFirstKElements) {
  constexpr size_t kM = 5, kBigK = 40, kK = 24, kN = 7;
  const auto a = kerneltest::Uniform(kM * kBigK, -1.0f, 1.0f, 48);
  const auto b = kerneltest::Uniform(kBigK * kN, -1.0f, 1.0f, 49);
  std::vector<float> dense_a(kM * kK), dense_b(b.begin(), b.begin() + kK * kN);
  for (size_t i = 0; i < kM; ++i)
    for (size_t p = 0; p < kK; ++p) dense_a[i * kK + p] = a[i * kBigK + p];
  std::vector<double> want(kM * kN, 0.0), scale(kM * kN, 0.0);
  Ref(dense_a, dense_b, kM, kK, kN, want, scale);
  std::vector<float> c(kM * kN, 99.0f);
  MatmulF32(c.data(), a.data(), b.data(), kM, kK, kN, false, MatmulLayout{.lda = kBigK, .ldb = kN});
  ExpectNear(c, want, scale);

  // Transposed: A as [K, m], B as [n, K]; the first k rows of A and the first k columns of B.
  std::vector<float> at(kBigK * kM), bt(kN * kBigK);
  for (size_t i = 0; i < kM; ++i)
    for (size_t p = 0; p < kBigK; ++p) at[p * kM + i] = a[i * kBigK + p];
  for (size_t p = 0; p < kBigK; ++p)
    for (size_t j = 0; j < kN; ++j) bt[j * kBigK + p] = b[p * kN + j];
  MatmulF32(c.data(), at.data(), bt.data(), kM, kK, kN, false,
            MatmulLayout{.a_trans = true, .b_trans = true, .lda = kM, .ldb = kBigK});
  ExpectNear(c, want, scale);

  // INT8: the same rows, exactly.
  std::vector<int8_t> ia(kM * kBigK), ib(kBigK * kN);
  for (size_t i = 0; i < ia.size(); ++i) ia[i] = static_cast<int8_t>(static_cast<int>(i * 7) % 11 - 5);
  for (size_t i = 0; i < ib.size(); ++i) ib[i] = static_cast<int8_t>(static_cast<int>(i * 5) % 9 - 4);
  std::vector<int32_t> ic(kM * kN, 0);
  MatmulI8(ic.data(), ia.data(), ib.data(), kM, kK, kN, false, MatmulLayout{.lda = kBigK, .ldb = kN});
  for (size_t i = 0; i < kM; ++i) {
    for (size_t j = 0; j < kN; ++j) {
      int32_t sum = 0;
      for (size_t p = 0; p < kK; ++p) sum += ia[i * kBigK + p] * ib[p * kN + j];
      ASSERT_EQ(ic[i * kN + j], sum) << i << ", " << j;
    }
  }
}

// Half-precision inputs: the reference multiplies the decoded (exactly widened) values.
void CheckHalf(ElemType type) {
  constexpr size_t kM = 17, kK = 65, kN = 9;
  const auto fa = kerneltest::Uniform(kM * kK, -2.0f, 2.0f, 46);
  const auto fb = kerneltest::Uniform(kK * kN, -2.0f, 2.0f, 47);
  std::vector<uint16_t> a(fa.size()), b(fb.size());
  ASSERT_TRUE(Convert(ElemType::F32, type, a.data(), fa.data(), fa.size(), RoundMode::Rint));
  ASSERT_TRUE(Convert(ElemType::F32, type, b.data(), fb.data(), fb.size(), RoundMode::Rint));
  std::vector<float> wa(a.size()), wb(b.size());
  ASSERT_TRUE(Convert(type, ElemType::F32, wa.data(), a.data(), a.size(), RoundMode::None));
  ASSERT_TRUE(Convert(type, ElemType::F32, wb.data(), b.data(), b.size(), RoundMode::None));
  std::vector<double> want(kM * kN, 0.0), scale(kM * kN, 0.0);
  Ref(wa, wb, kM, kK, kN, want, scale);
  std::vector<float> c(kM * kN, 99.0f);
  if (type == ElemType::F16) MatmulF16(c.data(), a.data(), b.data(), kM, kK, kN, false);
  else MatmulBF16(c.data(), a.data(), b.data(), kM, kK, kN, false);
  ExpectNear(c, want, scale);
}

TEST(Matmul, F16Inputs) { CheckHalf(ElemType::F16); }
TEST(Matmul, BF16Inputs) { CheckHalf(ElemType::BF16); }

// The simulator calls in from several host threads at once.
TEST(Matmul, ConcurrentCallersGetTheirOwnResults) {
  constexpr size_t kN = 64, kThreads = 4;
  const auto a = kerneltest::Uniform(kN * kN, -1.0f, 1.0f, 48);
  std::vector<std::vector<float>> b(kThreads), c(kThreads, std::vector<float>(kN * kN));
  for (size_t t = 0; t < kThreads; ++t) b[t] = kerneltest::Uniform(kN * kN, -1.0f, 1.0f, 49 + t);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 20; ++rep) MatmulF32(c[t].data(), a.data(), b[t].data(), kN, kN, kN, false);
    });
  for (auto& th : threads) th.join();
  for (size_t t = 0; t < kThreads; ++t) {
    std::vector<double> want(kN * kN, 0.0), scale(kN * kN, 0.0);
    Ref(a, b[t], kN, kN, kN, want, scale);
    ExpectNear(c[t], want, scale);
  }
}

// ---- INT8 inputs, INT32 accumulator ------------------------------------------------------------

std::vector<int8_t> RandomI8(size_t n, int32_t lo, int32_t hi, uint32_t seed) {
  const auto wide = kerneltest::UniformInt(n, lo, hi, seed);
  return std::vector<int8_t>(wide.begin(), wide.end());
}

// C (+)= A * B in int64 (A as [m, k] and B as [k, n], row-major), then wrapped to int32.
std::vector<int32_t> RefI8(const std::vector<int8_t>& a, const std::vector<int8_t>& b, size_t m, size_t k, size_t n,
                           std::vector<int32_t> c) {
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      int64_t sum = c[i * n + j];
      for (size_t p = 0; p < k; ++p) sum += int64_t{a[i * k + p]} * int64_t{b[p * n + j]};
      c[i * n + j] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(sum)));
    }
  }
  return c;
}

std::vector<int8_t> Transposed(const std::vector<int8_t>& x, size_t rows, size_t cols) {
  std::vector<int8_t> t(x.size());
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) t[c * rows + r] = x[r * cols + c];
  return t;
}

TEST(Matmul, I8IsExactAndAccumulates) {
  for (auto [m, k, n] : kSizes) {
    const auto a = RandomI8(m * k, -128, 127, 51);
    const auto b = RandomI8(k * n, -128, 127, 52);
    const auto c0 = kerneltest::UniformInt(m * n, -100000, 100000, 53);
    std::vector<int32_t> c = c0;  // overwritten: the old contents must not leak in
    MatmulI8(c.data(), a.data(), b.data(), m, k, n, /*accumulate=*/false);
    EXPECT_EQ(c, RefI8(a, b, m, k, n, std::vector<int32_t>(m * n, 0))) << m << "x" << k << "x" << n;
    c = c0;
    MatmulI8(c.data(), a.data(), b.data(), m, k, n, /*accumulate=*/true);
    EXPECT_EQ(c, RefI8(a, b, m, k, n, c0)) << m << "x" << k << "x" << n;
  }
}

TEST(Matmul, I8TakesTransposedOperands) {
  constexpr size_t kM = 9, kK = 37, kN = 19;
  const auto a = RandomI8(kM * kK, -128, 127, 54);
  const auto b = RandomI8(kK * kN, -128, 127, 55);
  const auto want = RefI8(a, b, kM, kK, kN, std::vector<int32_t>(kM * kN, 0));
  const auto at = Transposed(a, kM, kK), bt = Transposed(b, kK, kN);
  for (const bool a_trans : {false, true}) {
    for (const bool b_trans : {false, true}) {
      std::vector<int32_t> c(kM * kN, 7);
      MatmulI8(c.data(), a_trans ? at.data() : a.data(), b_trans ? bt.data() : b.data(), kM, kK, kN, false,
               {.a_trans = a_trans, .b_trans = b_trans});
      EXPECT_EQ(c, want) << "a_trans=" << a_trans << " b_trans=" << b_trans;
    }
  }
}

// (-128) * (-128) summed 2^17 times is 2^31: one past INT32_MAX, so the int32 sum wraps to INT32_MIN.
// Accumulating onto INT32_MAX wraps the other way round.
TEST(Matmul, I8SumsWrapAroundLikeAnInt32Accumulator) {
  constexpr size_t kK = size_t{1} << 17;
  const std::vector<int8_t> a(kK, -128), b(kK, -128);
  std::vector<int32_t> c(1, 0);
  MatmulI8(c.data(), a.data(), b.data(), 1, kK, 1, false);
  EXPECT_EQ(c[0], std::numeric_limits<int32_t>::min());
  const std::vector<int8_t> one = {1};
  c[0] = std::numeric_limits<int32_t>::max();
  MatmulI8(c.data(), one.data(), one.data(), 1, 1, 1, true);
  EXPECT_EQ(c[0], std::numeric_limits<int32_t>::min());
}

TEST(Matmul, I8EmptyInnerDimension) {
  std::vector<int32_t> c(6, 2);
  MatmulI8(c.data(), nullptr, nullptr, 2, 0, 3, true);
  EXPECT_EQ(c, std::vector<int32_t>(6, 2));
  MatmulI8(c.data(), nullptr, nullptr, 2, 0, 3, false);
  EXPECT_EQ(c, std::vector<int32_t>(6, 0));
}

}  // namespace
}  // namespace pypto::sim
