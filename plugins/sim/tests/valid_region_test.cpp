// Tiles whose valid region is smaller than the tile: the pad patterns, fillpad and reductions over
// the valid corner against plain loops, and a kernel whose load and store move only that corner.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/valid_region.h"
#include "pad_value.h"
#include "sim_test_util.h"

namespace simtest {
namespace {

namespace sim = pypto::sim;
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(PadValue, IdentitiesOfMaxAndMinReductions) {
  using ir::DataType;
  EXPECT_EQ(sim::PadBits(DataType::FP32, "zero"), 0u);
  EXPECT_EQ(sim::PadBits(DataType::FP32, "min"), kerneltest::Bits(-kInf));
  EXPECT_EQ(sim::PadBits(DataType::FP32, "max"), kerneltest::Bits(kInf));
  EXPECT_EQ(sim::PadBits(DataType::FP16, "min"), 0xFC00u);
  EXPECT_EQ(sim::PadBits(DataType::BF16, "max"), 0x7F80u);
  EXPECT_EQ(sim::PadBits(DataType::INT32, "min"), 0x80000000u);
  EXPECT_EQ(sim::PadBits(DataType::INT8, "max"), 0x7Fu);
  EXPECT_EQ(sim::PadBits(DataType::UINT16, "max"), 0xFFFFu);
  EXPECT_EQ(sim::PadBits(DataType::UINT16, "min"), 0u);
  EXPECT_EQ(sim::PadBits(DataType::FP32, "lowest"), std::nullopt);
}

TEST(FillPad, KeepsTheValidCornerAndPadsTheRest) {
  for (auto [rows, cols] : kerneltest::kShapes) {
    for (size_t vr : {size_t{0}, rows / 2, rows}) {
      for (size_t vc : {size_t{0}, cols / 3, cols}) {
        auto src = kerneltest::Uniform(rows * cols, -4, 4, 7);
        std::vector<float> dst(rows * cols, 123.0f);
        sim::FillPad(dst.data(), src.data(), rows, cols, vr, vc, 4, kerneltest::Bits(-kInf));
        for (size_t r = 0; r < rows; ++r)
          for (size_t c = 0; c < cols; ++c)
            ASSERT_EQ(dst[r * cols + c], r < vr && c < vc ? src[r * cols + c] : -kInf)
                << rows << "x" << cols << " valid " << vr << "x" << vc << " at " << r << "," << c;
        sim::FillPad(src.data(), src.data(), rows, cols, vr, vc, 4, 0);  // in place
        for (size_t r = 0; r < rows; ++r)
          for (size_t c = 0; c < cols; ++c)
            if (r >= vr || c >= vc) ASSERT_EQ(src[r * cols + c], 0.0f);
      }
    }
  }
}

TEST(Triangle, OnesOnOneSideOfTheDiagonalOverTheValidCorner) {
  constexpr size_t kRows = 4, kCols = 6;
  for (const bool upper : {false, true}) {
    for (const int64_t diagonal : {-1, 0, 2}) {
      std::vector<int16_t> dst(kRows * kCols, -5);
      sim::Triangle(dst.data(), kCols, 3, 5, diagonal, upper, sizeof(int16_t), 1);
      for (size_t r = 0; r < kRows; ++r) {
        for (size_t c = 0; c < kCols; ++c) {
          const auto boundary = static_cast<int64_t>(r) + diagonal, col = static_cast<int64_t>(c);
          const int16_t expected = r >= 3 || c >= 5 ? -5 : (upper ? col >= boundary : col <= boundary) ? 1 : 0;
          EXPECT_EQ(dst[r * kCols + c], expected) << upper << " " << diagonal << " " << r << ", " << c;
        }
      }
    }
  }
}

TEST(ValidReduce, RowsAndColumnsOfTheValidCorner) {
  const size_t rows = 9, cols = 37, vr = 5, vc = 20;
  auto src = kerneltest::Uniform(rows * cols, -3, 3, 11);
  std::vector<float> row(rows, 99.0f), col(cols, 99.0f);
  sim::RowReduceValidF32(sim::ReduceOp::Max, row.data(), src.data(), cols, vr, vc);
  sim::ColReduceValidF32(sim::ReduceOp::Sum, col.data(), src.data(), cols, vr, vc);
  for (size_t r = 0; r < rows; ++r) {
    if (r >= vr) {
      EXPECT_EQ(row[r], 99.0f);  // rows past the valid region are not written
      continue;
    }
    float best = -kInf;
    for (size_t c = 0; c < vc; ++c) best = std::max(best, src[r * cols + c]);
    EXPECT_EQ(row[r], best) << r;
  }
  for (size_t c = 0; c < vc; ++c) {
    double sum = 0;
    for (size_t r = 0; r < vr; ++r) sum += src[r * cols + c];
    EXPECT_NEAR(col[c], sum, 1e-5) << c;
  }
  std::vector<int32_t> ints = kerneltest::UniformInt(rows * cols, -100, 100, 3), isum(rows, 0);
  ASSERT_TRUE(sim::RowReduceValidI32(sim::ReduceOp::Sum, isum.data(), ints.data(), cols, vr, vc));
  for (size_t r = 0; r < vr; ++r) {
    int32_t sum = 0;
    for (size_t c = 0; c < vc; ++c) sum += ints[r * cols + c];
    EXPECT_EQ(isum[r], sum) << r;
  }
}

// t = load(a, [0, 0], [8, 8], valid_shape=[3, 5]); p = fillpad(t); store(t, c); store(p, d):
// c keeps what it held outside [3, 5]; d holds zeros there.
TEST(SimValidRegion, LoadAndStoreMoveOnlyTheValidCorner) {
  KernelBuilder k("ragged_incore_0");
  auto a = k.Tensor("a", {8, 8});
  auto c = k.Tensor("c", {8, 8}, ir::DataType::FP32, ir::ParamDirection::Out);
  auto d = k.Tensor("d", {8, 8}, ir::DataType::FP32, ir::ParamDirection::Out);
  auto span = k.NextSpan();
  const auto& registry = ir::OpRegistry::Get();
  auto load = registry.CreateCall("tile.load", {a, Ints({0, 0}), Ints({8, 8}), Ints({3, 5})}, {}, span);
  ASSERT_TRUE(load) << load.error().str();
  auto ragged = ir::WithValidShape(*KernelBuilder::TileAt({8, 8}, ir::DataType::FP32, 0)->As<ir::TileType>(),
                                   (*load)->type()->As<ir::TileType>()->valid_shape());
  auto t = k.Custom(registry.Find("tile.load"), "t", (*load)->args(), ragged);
  auto padded = k.Custom(registry.Find("tile.fillpad"), "p", {t}, KernelBuilder::TileAt({8, 8}, ir::DataType::FP32, 256));
  k.Store(t, {0, 0}, c, /*as_eval=*/true);
  k.Store(padded, {0, 0}, d, /*as_eval=*/true);
  auto program = MakeProgram({k.Build()});
  auto plan = SingleTaskPlan("ragged_incore_0",
                             {{"a", PYPTO_RT_FLOAT32, {8, 8}}, {"c", PYPTO_RT_FLOAT32, {8, 8}},
                              {"d", PYPTO_RT_FLOAT32, {8, 8}}},
                             {rt::ArgDirection::Input, rt::ArgDirection::OutputExisting,
                              rt::ArgDirection::OutputExisting});
  std::vector<float> av(64), cv(64, -1.0f), dv(64, -1.0f);
  for (size_t i = 0; i < av.size(); ++i) av[i] = static_cast<float>(i);
  auto result = Execute(*program, plan, {Dense(av, {8, 8}), Dense(cv, {8, 8}), Dense(dv, {8, 8})});
  ASSERT_EQ(result.status, PYPTO_OK) << result.message;
  for (size_t r = 0; r < 8; ++r) {
    for (size_t col = 0; col < 8; ++col) {
      const bool valid = r < 3 && col < 5;
      EXPECT_EQ(cv[r * 8 + col], valid ? av[r * 8 + col] : -1.0f) << r << "," << col;
      EXPECT_EQ(dv[r * 8 + col], valid ? av[r * 8 + col] : 0.0f) << r << "," << col;
    }
  }
}

}  // namespace
}  // namespace simtest
