// Type deduction of the ops on windows of tiles (tile.slice, tile.extract, tile.assemble): the
// result types, windows at offsets known only at run time, and the errors for windows outside their
// tile and for buffer pairs the hardware cannot copy between.
#include <gtest/gtest.h>

#include "pypto/ir/op_registry.h"
#include "sample_programs.h"

namespace pypto::ir {
namespace {

using testing::Ints;

Result<CallPtr> Create(std::string_view op, std::vector<ExprPtr> args, Call::Kwargs kwargs = {}) {
  return OpRegistry::Get().CreateCall(op, std::move(args), std::move(kwargs), Span{"k.py", 4, 9});
}

ExprPtr TileIn(int64_t rows, int64_t cols, MemorySpace space) {
  return testing::OpWithKwargs("tile.load", {testing::Tensor("x", {rows, cols}), Ints({0, 0}), Ints({rows, cols})},
                               {{"target_memory", space}});
}

ExprPtr Index(int64_t value) { return std::make_shared<ConstInt>(value, DataType::INDEX, Span{}); }

TEST(TileWindowOps, SliceCopiesAWindowAtConstantOrComputedOffsets) {
  auto call = Create("tile.slice", {TileIn(1, 1024, MemorySpace::Vec), Ints({1, 32}), Ints({0, 64})});
  ASSERT_TRUE(call) << call.error().str();
  EXPECT_EQ((*call)->type()->str(), "pl.Tile[[1, 32], pl.FP32, pl.Mem.Vec]");
  auto i = testing::Scalar("i", DataType::INDEX);
  auto computed = Create("tile.slice", {TileIn(32, 16, MemorySpace::Vec), Ints({1, 16}),
                                        std::make_shared<TupleLiteral>(std::vector<ExprPtr>{i, Index(0)})});
  ASSERT_TRUE(computed) << computed.error().str();
  auto outside = Create("tile.slice", {TileIn(1, 64, MemorySpace::Vec), Ints({1, 32}), Ints({0, 48})});
  ASSERT_FALSE(outside);
  EXPECT_EQ(outside.error().message,
            "the window at [0, 48] of shape [1, 32] is outside pl.Tile[[1, 64], pl.FP32, pl.Mem.Vec] (dimension 1)");
}

TEST(TileWindowOps, ExtractCopiesAMatWindowIntoL0) {
  const Call::Kwargs left{{"target_memory", MemorySpace::Left}};
  auto i = testing::Scalar("i", DataType::INDEX);
  auto call = Create("tile.extract", {TileIn(256, 128, MemorySpace::Mat), i, Index(64), Ints({128, 64})}, left);
  ASSERT_TRUE(call) << call.error().str();
  EXPECT_EQ((*call)->type()->str(), "pl.Tile[[128, 64], pl.FP32, pl.Mem.Left]");
  auto outside = Create("tile.extract", {TileIn(256, 128, MemorySpace::Mat), i, Index(96), Ints({128, 64})}, left);
  ASSERT_FALSE(outside);
  EXPECT_EQ(outside.error().message,
            "the window at [?, 96] of shape [128, 64] is outside pl.Tile[[256, 128], pl.FP32, pl.Mem.Mat] "
            "(dimension 1)");
  auto from_vec = Create("tile.extract", {TileIn(64, 64, MemorySpace::Vec), i, Index(0), Ints({32, 32})}, left);
  ASSERT_FALSE(from_vec);
  EXPECT_EQ(from_vec.error().message, "tile.extract cannot copy a window from Vec to Left");
  EXPECT_EQ(from_vec.error().hint, "windows go Mat -> Left/Right/Mat, Acc -> Mat, Vec -> Vec");
}

TEST(TileWindowOps, AssembleWritesIntoTheTargetInPlace) {
  auto target = TileIn(32, 32, MemorySpace::Vec);
  auto call = Create("tile.assemble", {target, TileIn(32, 16, MemorySpace::Vec), Ints({0, 16})});
  ASSERT_TRUE(call) << call.error().str();
  EXPECT_EQ((*call)->type()->str(), "pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec]");
  EXPECT_EQ((*call)->op()->result_aliases_arg, 0);
  auto outside = Create("tile.assemble", {target, TileIn(32, 16, MemorySpace::Vec), Ints({0, 24})});
  ASSERT_FALSE(outside);
  EXPECT_EQ(outside.error().message,
            "the window at [0, 24] of shape [32, 16] is outside pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] (dimension 1)");
  auto across = Create("tile.assemble", {target, TileIn(32, 16, MemorySpace::Mat), Ints({0, 0})});
  ASSERT_FALSE(across);
  EXPECT_EQ(across.error().message, "tile.assemble cannot write a Mat tile into a Vec tile");
  auto dtype = Create("tile.assemble",
                      {target, testing::Op("tile.load", {testing::Tensor("h", {32, 16}, DataType::FP16), Ints({0, 0}),
                                                         Ints({32, 16})}),
                       Ints({0, 0})});
  ASSERT_FALSE(dtype);
  EXPECT_EQ(dtype.error().message,
            "tile.assemble writes pl.Tile[[32, 16], pl.FP16, pl.Mem.Vec] into pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec]: "
            "the dtypes differ");
}

}  // namespace
}  // namespace pypto::ir
