// Row and column reductions against double-precision loops: every op over ragged shapes, sums that
// must stay accurate over long rows and many rows, NaN propagation, empty axes, in-place results and
// integer wrap-around.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/reduce.h"

namespace pypto::sim {
namespace {

using kerneltest::kShapes;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr ReduceOp kOps[] = {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod};

// Reduction of n values at p spaced `stride` apart, in double.
double Ref(ReduceOp op, const float* p, size_t n, size_t stride) {
  double acc = op == ReduceOp::Sum ? 0.0 : op == ReduceOp::Prod ? 1.0 : op == ReduceOp::Max ? -INFINITY : INFINITY;
  for (size_t i = 0; i < n; ++i) {
    const double x = p[i * stride];
    if (std::isnan(x)) return x;
    switch (op) {
      case ReduceOp::Sum: acc += x; break;
      case ReduceOp::Prod: acc *= x; break;
      case ReduceOp::Max: acc = std::max(acc, x); break;
      case ReduceOp::Min: acc = std::min(acc, x); break;
    }
  }
  return acc;
}

// Sum of |x| over the same values: the scale of a sum's rounding error.
double AbsSum(const float* p, size_t n, size_t stride) {
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += std::fabs(p[i * stride]);
  return s;
}

// Sums are checked relative to the sum of magnitudes (cancellation makes the plain relative error
// meaningless); max and min are exact; products of values near 1 to float precision.
void ExpectClose(ReduceOp op, float got, double ref, double abs_sum, const std::string& where) {
  switch (op) {
    case ReduceOp::Sum: EXPECT_NEAR(got, ref, 1e-6 * abs_sum + 1e-30) << where; break;
    case ReduceOp::Prod: EXPECT_NEAR(got, ref, 1e-5 * std::fabs(ref)) << where; break;
    default: EXPECT_EQ(got, static_cast<float>(ref)) << where; break;
  }
}

// Values near 1 keep products finite over long rows; signs vary for the other ops.
std::vector<float> Data(ReduceOp op, size_t n, uint32_t seed) {
  return op == ReduceOp::Prod ? kerneltest::Uniform(n, 0.9f, 1.1f, seed) : kerneltest::Uniform(n, -10.0f, 10.0f, seed);
}

TEST(Reduce, RowF32AllOpsAndShapes) {
  for (ReduceOp op : kOps) {
    for (auto [rows, cols] : kShapes) {
      const auto src = Data(op, rows * cols, 11);
      std::vector<float> dst(rows, -7.0f);
      RowReduceF32(op, dst.data(), src.data(), rows, cols);
      for (size_t r = 0; r < rows; ++r) {
        const float* row = src.data() + r * cols;
        ExpectClose(op, dst[r], Ref(op, row, cols, 1), AbsSum(row, cols, 1),
                    "op=" + std::to_string(int(op)) + " " + std::to_string(rows) + "x" + std::to_string(cols));
      }
    }
  }
}

TEST(Reduce, ColF32AllOpsAndShapes) {
  for (ReduceOp op : kOps) {
    for (auto [rows, cols] : kShapes) {
      const auto src = Data(op, rows * cols, 12);
      std::vector<float> dst(cols, -7.0f);
      ColReduceF32(op, dst.data(), src.data(), rows, cols);
      for (size_t c = 0; c < cols; ++c)
        ExpectClose(op, dst[c], Ref(op, src.data() + c, rows, cols), AbsSum(src.data() + c, rows, cols),
                    "op=" + std::to_string(int(op)) + " " + std::to_string(rows) + "x" + std::to_string(cols));
    }
  }
}

// The brief's accuracy bar: a 64x4096 row sum within 1e-5 relative of double. Positive data, so the
// relative error is the honest measure; pairwise summation keeps it near 1e-7.
TEST(Reduce, LongRowSumsMatchDouble) {
  constexpr size_t kRows = 64, kCols = 4096;
  const auto src = kerneltest::Uniform(kRows * kCols, 0.0f, 1.0f, 13);
  std::vector<float> dst(kRows);
  RowReduceF32(ReduceOp::Sum, dst.data(), src.data(), kRows, kCols);
  double worst = 0;
  for (size_t r = 0; r < kRows; ++r) {
    const double ref = Ref(ReduceOp::Sum, src.data() + r * kCols, kCols, 1);
    worst = std::max(worst, std::fabs(dst[r] - ref) / ref);
  }
  EXPECT_LT(worst, 1e-6);
  // A sequential float sum of the same rows drifts an order of magnitude further; make sure the
  // test data would expose that, so the bound above means something.
  double naive_worst = 0;
  for (size_t r = 0; r < kRows; ++r) {
    float s = 0;
    for (size_t c = 0; c < kCols; ++c) s += src[r * kCols + c];
    const double ref = Ref(ReduceOp::Sum, src.data() + r * kCols, kCols, 1);
    naive_worst = std::max(naive_worst, std::fabs(s - ref) / ref);
  }
  EXPECT_GT(naive_worst, 2 * worst);
}

TEST(Reduce, ManyRowColumnSumsMatchDouble) {
  constexpr size_t kRows = 4096, kCols = 37;
  const auto src = kerneltest::Uniform(kRows * kCols, 0.0f, 1.0f, 14);
  std::vector<float> dst(kCols);
  ColReduceF32(ReduceOp::Sum, dst.data(), src.data(), kRows, kCols);
  for (size_t c = 0; c < kCols; ++c) {
    const double ref = Ref(ReduceOp::Sum, src.data() + c, kRows, kCols);
    EXPECT_LT(std::fabs(dst[c] - ref) / ref, 1e-6) << "c=" << c;
  }
}

TEST(Reduce, MaxMinPropagateNaNAndHandleInf) {
  constexpr size_t kRows = 3, kCols = 37;
  std::vector<float> src(kRows * kCols, 1.0f);
  src[0 * kCols + 5] = kNaN;    // row 0: NaN in a full vector
  src[1 * kCols + 36] = kNaN;   // row 1: NaN in the tail
  src[2 * kCols + 4] = -kInf;   // row 2: no NaN
  src[2 * kCols + 30] = kInf;
  std::vector<float> dst(kRows);
  RowReduceF32(ReduceOp::Max, dst.data(), src.data(), kRows, kCols);
  EXPECT_TRUE(std::isnan(dst[0]) && std::isnan(dst[1]));
  EXPECT_EQ(dst[2], kInf);
  RowReduceF32(ReduceOp::Min, dst.data(), src.data(), kRows, kCols);
  EXPECT_TRUE(std::isnan(dst[0]) && std::isnan(dst[1]));
  EXPECT_EQ(dst[2], -kInf);
  std::vector<float> cols(kCols);
  ColReduceF32(ReduceOp::Max, cols.data(), src.data(), kRows, kCols);
  EXPECT_TRUE(std::isnan(cols[5]) && std::isnan(cols[36]));
  EXPECT_EQ(cols[30], kInf);
  EXPECT_EQ(cols[0], 1.0f);
}

TEST(Reduce, EmptyAxisGivesIdentity) {
  std::vector<float> dst(3, 5.0f);
  const float* none = nullptr;
  RowReduceF32(ReduceOp::Sum, dst.data(), none, 3, 0);
  EXPECT_EQ(dst, (std::vector<float>{0, 0, 0}));
  RowReduceF32(ReduceOp::Max, dst.data(), none, 3, 0);
  EXPECT_EQ(dst[0], -kInf);
  ColReduceF32(ReduceOp::Prod, dst.data(), none, 0, 3);
  EXPECT_EQ(dst, (std::vector<float>{1, 1, 1}));
  ColReduceF32(ReduceOp::Min, dst.data(), none, 0, 3);
  EXPECT_EQ(dst[2], kInf);
}

TEST(Reduce, InPlaceResultsOverwriteTheSource) {
  for (ReduceOp op : kOps) {
    for (auto [rows, cols] : kShapes) {
      const auto src = Data(op, rows * cols, 15);
      std::vector<float> row_out(rows), col_out(cols);
      RowReduceF32(op, row_out.data(), src.data(), rows, cols);
      ColReduceF32(op, col_out.data(), src.data(), rows, cols);
      auto buf = src;
      RowReduceF32(op, buf.data(), buf.data(), rows, cols);
      EXPECT_EQ(std::vector<float>(buf.begin(), buf.begin() + rows), row_out);
      buf = src;
      ColReduceF32(op, buf.data(), buf.data(), rows, cols);
      EXPECT_EQ(std::vector<float>(buf.begin(), buf.begin() + cols), col_out);
    }
  }
}

TEST(Reduce, Int32SumWrapsMaxMinExactProdRejected) {
  for (auto [rows, cols] : kShapes) {
    const auto src = kerneltest::UniformInt(rows * cols, INT32_MIN, INT32_MAX, 16);
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min}) {
      std::vector<int32_t> row_out(rows), col_out(cols);
      ASSERT_TRUE(RowReduceI32(op, row_out.data(), src.data(), rows, cols));
      ASSERT_TRUE(ColReduceI32(op, col_out.data(), src.data(), rows, cols));
      const auto ref = [&](size_t start, size_t n, size_t stride) {
        uint32_t sum = 0;
        int32_t hi = INT32_MIN, lo = INT32_MAX;
        for (size_t i = 0; i < n; ++i) {
          const int32_t x = src[start + i * stride];
          sum += static_cast<uint32_t>(x);
          hi = std::max(hi, x);
          lo = std::min(lo, x);
        }
        return op == ReduceOp::Sum ? static_cast<int32_t>(sum) : op == ReduceOp::Max ? hi : lo;
      };
      for (size_t r = 0; r < rows; ++r) EXPECT_EQ(row_out[r], ref(r * cols, cols, 1)) << "op=" << int(op);
      for (size_t c = 0; c < cols; ++c) EXPECT_EQ(col_out[c], ref(c, rows, cols)) << "op=" << int(op);
    }
  }
  std::vector<int32_t> src = {1, 2}, dst = {7};
  EXPECT_FALSE(RowReduceI32(ReduceOp::Prod, dst.data(), src.data(), 1, 2));
  EXPECT_FALSE(ColReduceI32(ReduceOp::Prod, dst.data(), src.data(), 2, 1));
  EXPECT_EQ(dst[0], 7);
}

}  // namespace
}  // namespace pypto::sim
