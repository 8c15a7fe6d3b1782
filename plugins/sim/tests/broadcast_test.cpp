// Row/column broadcasts against plain loops: every expand op, exp(src - vec), broadcast copies and
// fills, over ragged shapes, with dst aliasing the tile and aliasing the vector.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/broadcast.h"

namespace pypto::sim {
namespace {

using kerneltest::Bits;
using kerneltest::kShapes;
using kerneltest::SameFloat;
using kerneltest::UlpError;

constexpr BinaryOp kOps[] = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Max, BinaryOp::Min};

float Ref(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::Add: return a + b;
    case BinaryOp::Sub: return a - b;
    case BinaryOp::Mul: return a * b;
    case BinaryOp::Div: return a / b;
    case BinaryOp::Max: return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
    case BinaryOp::Min: return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
  }
  return 0;
}

TEST(Broadcast, RowAndColExpandAllOps) {
  for (BinaryOp op : kOps) {
    for (auto [rows, cols] : kShapes) {
      const auto src = kerneltest::Uniform(rows * cols, -20.0f, 20.0f, 21);
      const auto row_vec = kerneltest::Uniform(rows, 0.5f, 4.0f, 22);
      const auto col_vec = kerneltest::Uniform(cols, -4.0f, -0.5f, 23);
      std::vector<float> by_row(rows * cols), by_col(rows * cols);
      RowExpandF32(op, by_row.data(), src.data(), row_vec.data(), rows, cols);
      ColExpandF32(op, by_col.data(), src.data(), col_vec.data(), rows, cols);
      for (size_t r = 0; r < rows; ++r) {
        for (size_t c = 0; c < cols; ++c) {
          const size_t i = r * cols + c;
          ASSERT_TRUE(SameFloat(by_row[i], Ref(op, src[i], row_vec[r]))) << "op=" << int(op) << " r=" << r;
          ASSERT_TRUE(SameFloat(by_col[i], Ref(op, src[i], col_vec[c]))) << "op=" << int(op) << " c=" << c;
        }
      }
      auto inplace = src;  // dst == src
      RowExpandF32(op, inplace.data(), inplace.data(), row_vec.data(), rows, cols);
      EXPECT_EQ(inplace, by_row);
      inplace = src;
      ColExpandF32(op, inplace.data(), inplace.data(), col_vec.data(), rows, cols);
      EXPECT_EQ(inplace, by_col);
    }
  }
}

// dst starts where the vector lives: the vector must be read in full before rows overwrite it.
TEST(Broadcast, VectorAliasingDst) {
  constexpr size_t kRows = 5, kCols = 9;
  const auto src = kerneltest::Uniform(kRows * kCols, 1.0f, 2.0f, 24);
  const auto vec = kerneltest::Uniform(std::max(kRows, kCols), 3.0f, 4.0f, 25);
  std::vector<float> want(kRows * kCols), buf(kRows * kCols);

  RowExpandF32(BinaryOp::Sub, want.data(), src.data(), vec.data(), kRows, kCols);
  std::copy(vec.begin(), vec.begin() + kRows, buf.begin());
  RowExpandF32(BinaryOp::Sub, buf.data(), src.data(), buf.data(), kRows, kCols);
  EXPECT_EQ(buf, want);

  ColExpandF32(BinaryOp::Mul, want.data(), src.data(), vec.data(), kRows, kCols);
  std::copy(vec.begin(), vec.begin() + kCols, buf.begin());
  ColExpandF32(BinaryOp::Mul, buf.data(), src.data(), buf.data(), kRows, kCols);
  EXPECT_EQ(buf, want);

  RowBroadcastF32(want.data(), vec.data(), kRows, kCols);
  std::copy(vec.begin(), vec.begin() + kRows, buf.begin());
  RowBroadcastF32(buf.data(), buf.data(), kRows, kCols);
  EXPECT_EQ(buf, want);

  ColBroadcastF32(want.data(), vec.data(), kRows, kCols);
  std::copy(vec.begin(), vec.begin() + kCols, buf.begin());
  ColBroadcastF32(buf.data(), buf.data(), kRows, kCols);
  EXPECT_EQ(buf, want);

  RowExpandExpDifF32(want.data(), src.data(), vec.data(), kRows, kCols);
  std::copy(vec.begin(), vec.begin() + kRows, buf.begin());
  RowExpandExpDifF32(buf.data(), src.data(), buf.data(), kRows, kCols);
  EXPECT_EQ(buf, want);
}

TEST(Broadcast, ExpDifMatchesExpOfDifference) {
  for (auto [rows, cols] : kShapes) {
    const auto src = kerneltest::Uniform(rows * cols, -40.0f, 40.0f, 26);
    const auto row_vec = kerneltest::Uniform(rows, -40.0f, 40.0f, 27);
    const auto col_vec = kerneltest::Uniform(cols, -40.0f, 40.0f, 28);
    std::vector<float> by_row(rows * cols), by_col(rows * cols);
    RowExpandExpDifF32(by_row.data(), src.data(), row_vec.data(), rows, cols);
    ColExpandExpDifF32(by_col.data(), src.data(), col_vec.data(), rows, cols);
    for (size_t r = 0; r < rows; ++r) {
      for (size_t c = 0; c < cols; ++c) {
        const size_t i = r * cols + c;
        // The difference is rounded to float first, as the kernel (and the device) computes it; exp
        // itself is within 1.04 ULP (elementwise_test).
        ASSERT_LE(UlpError(by_row[i], std::exp(double{src[i] - row_vec[r]})), 1.04) << r << "," << c;
        ASSERT_LE(UlpError(by_col[i], std::exp(double{src[i] - col_vec[c]})), 1.04) << r << "," << c;
      }
    }
    auto inplace = src;
    RowExpandExpDifF32(inplace.data(), inplace.data(), row_vec.data(), rows, cols);
    EXPECT_EQ(inplace, by_row);
  }
  // The softmax use: exp(x - rowmax) with -inf entries (masked) gives exactly 0, and NaN stays NaN.
  const std::vector<float> src = {-INFINITY, 0.0f, NAN, 1.0f};
  const std::vector<float> row_max = {1.0f};
  std::vector<float> out(4);
  RowExpandExpDifF32(out.data(), src.data(), row_max.data(), 1, 4);
  EXPECT_EQ(Bits(out[0]), Bits(0.0f));
  EXPECT_TRUE(std::isnan(out[2]));
  EXPECT_EQ(out[3], 1.0f);
}

TEST(Broadcast, CopiesAndFills) {
  for (auto [rows, cols] : kShapes) {
    const auto row_vec = kerneltest::Uniform(rows, -1.0f, 1.0f, 29);
    const auto col_vec = kerneltest::Uniform(cols, -1.0f, 1.0f, 30);
    std::vector<float> by_row(rows * cols), by_col(rows * cols);
    RowBroadcastF32(by_row.data(), row_vec.data(), rows, cols);
    ColBroadcastF32(by_col.data(), col_vec.data(), rows, cols);
    for (size_t r = 0; r < rows; ++r) {
      for (size_t c = 0; c < cols; ++c) {
        ASSERT_EQ(by_row[r * cols + c], row_vec[r]);
        ASSERT_EQ(by_col[r * cols + c], col_vec[c]);
      }
    }
  }
  for (size_t n : kerneltest::kLengths) {
    std::vector<float> f(n + 1, 3.0f);
    FillF32(f.data(), -0.0f, n);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(Bits(f[i]), Bits(-0.0f));
    EXPECT_EQ(f[n], 3.0f);  // nothing past n
    std::vector<int32_t> g(n + 1, 3);
    FillI32(g.data(), INT32_MIN, n);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(g[i], INT32_MIN);
    EXPECT_EQ(g[n], 3);
  }
}

}  // namespace
}  // namespace pypto::sim
