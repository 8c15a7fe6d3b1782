// The vectorized element-wise kernels against plain scalar loops: every length around the vector
// width (tails), and results written over an operand (in-place reuse).
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <vector>

#include "tile_ops.h"

namespace pypto::sim {
namespace {

float RefF32(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::Add: return a + b;
    case BinaryOp::Sub: return a - b;
    case BinaryOp::Mul: return a * b;
    case BinaryOp::Div: return a / b;
    case BinaryOp::Max: return std::max(a, b);
    case BinaryOp::Min: return std::min(a, b);
  }
  return 0;
}

int32_t RefI32(BinaryOp op, int32_t a, int32_t b) {
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

constexpr BinaryOp kOps[] = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Max, BinaryOp::Min};

TEST(TileOps, ReportsItsTarget) { EXPECT_STRNE(TileOpsTarget(), ""); }

TEST(TileOps, Float32AllLengthsAndAliasing) {
  for (BinaryOp op : kOps) {
    for (size_t n = 0; n <= 70; ++n) {
      std::vector<float> a(n), b(n), out(n, -1.0f);
      for (size_t i = 0; i < n; ++i) {
        a[i] = static_cast<float>(i) * 1.25f - 7.0f;
        b[i] = static_cast<float>(i % 9) + 0.5f;
      }
      BinaryF32(op, out.data(), a.data(), b.data(), n);
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], RefF32(op, a[i], b[i])) << "n=" << n << " i=" << i;
      auto in_a = a;
      BinaryF32(op, in_a.data(), in_a.data(), b.data(), n);  // dst == lhs
      EXPECT_EQ(in_a, out);
      auto in_b = b;
      BinaryF32(op, in_b.data(), a.data(), in_b.data(), n);  // dst == rhs
      EXPECT_EQ(in_b, out);
    }
  }
}

TEST(TileOps, Int32AllLengthsWrapAndAliasing) {
  for (BinaryOp op : kOps) {
    for (size_t n = 0; n <= 70; ++n) {
      std::vector<int32_t> a(n), b(n), out(n, 0);
      for (size_t i = 0; i < n; ++i) {
        a[i] = i % 5 == 0 ? INT32_MIN + static_cast<int32_t>(i) : static_cast<int32_t>(i * 2654435761u);
        b[i] = i % 7 == 0 ? -1 : static_cast<int32_t>(i % 13) - 6;
        if (b[i] == 0) b[i] = 3;
      }
      ASSERT_TRUE(BinaryI32(op, out.data(), a.data(), b.data(), n));
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], RefI32(op, a[i], b[i])) << "n=" << n << " i=" << i;
      auto in_a = a;
      ASSERT_TRUE(BinaryI32(op, in_a.data(), in_a.data(), b.data(), n));
      EXPECT_EQ(in_a, out);
    }
  }
}

TEST(TileOps, Int32DivisionByZeroIsReported) {
  std::vector<int32_t> a(8, 1), b(8, 1), out(8);
  b[5] = 0;
  EXPECT_FALSE(BinaryI32(BinaryOp::Div, out.data(), a.data(), b.data(), a.size()));
  EXPECT_TRUE(BinaryI32(BinaryOp::Mul, out.data(), a.data(), b.data(), a.size()));
}

TEST(TileOps, Float32DivisionByZeroFollowsIeee) {
  std::vector<float> a = {1.0f, -1.0f, 0.0f}, b = {0.0f, 0.0f, 0.0f}, out(3);
  BinaryF32(BinaryOp::Div, out.data(), a.data(), b.data(), 3);
  EXPECT_TRUE(std::isinf(out[0]) && out[0] > 0);
  EXPECT_TRUE(std::isinf(out[1]) && out[1] < 0);
  EXPECT_TRUE(std::isnan(out[2]));
}

}  // namespace
}  // namespace pypto::sim
