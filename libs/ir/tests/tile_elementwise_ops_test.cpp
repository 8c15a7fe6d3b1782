// Type deduction of the element-wise ops added for upstream's activation, trigonometric and bitwise
// tests (tile.lrelu, tile.sin, tile.cos, tile.not) and of the high_precision attribute of tile.div
// and tile.log: the result types, and the errors for dtypes the PTO instructions do not define.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"
#include "sample_programs.h"

namespace pypto::ir {
namespace {

using testing::Ints;
using testing::Tensor;

ExprPtr Loaded(DataType dtype, int64_t rows = 16, int64_t cols = 32) {
  return testing::Op("tile.load", {Tensor("x", {rows, cols}, dtype), Ints({0, 0}), Ints({rows, cols})});
}

ExprPtr Float(double value) { return std::make_shared<ConstFloat>(value, DataType::FP32, Span{}); }

Result<CallPtr> Create(std::string_view op, std::vector<ExprPtr> args, Call::Kwargs kwargs = {}) {
  return OpRegistry::Get().CreateCall(op, std::move(args), std::move(kwargs), Span{"k.py", 7, 5});
}

TEST(TileElementwiseOps, LeakyReluKeepsTheTileType) {
  auto fp32 = Create("tile.lrelu", {Loaded(DataType::FP32), Float(0.1)});
  ASSERT_TRUE(fp32) << fp32.error().str();
  EXPECT_EQ((*fp32)->type()->str(), "pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec]");
  auto fp16 = Create("tile.lrelu", {Loaded(DataType::FP16), Float(-0.5)});
  ASSERT_TRUE(fp16) << fp16.error().str();
  EXPECT_EQ((*fp16)->type()->str(), "pl.Tile[[16, 32], pl.FP16, pl.Mem.Vec]");
  EXPECT_EQ(CallAffinity(**fp32), CoreAffinity::Vector);
}

TEST(TileElementwiseOps, PreluKeepsTheTileTypeAndIsNotInPlace) {
  auto fp16 = Create("tile.prelu", {Loaded(DataType::FP16), Loaded(DataType::FP16), Loaded(DataType::UINT8, 17, 32)});
  ASSERT_TRUE(fp16) << fp16.error().str();
  EXPECT_EQ((*fp16)->type()->str(), "pl.Tile[[16, 32], pl.FP16, pl.Mem.Vec]");
  EXPECT_FALSE(OpRegistry::Get().Find("tile.prelu")->inplace_safe);
}

TEST(TileElementwiseOps, PreluErrors) {
  auto tmp = Loaded(DataType::UINT8, 17, 32);
  auto ints = Create("tile.prelu", {Loaded(DataType::INT32), Loaded(DataType::INT32), tmp});
  ASSERT_FALSE(ints);
  EXPECT_EQ(ints.error().str(), "k.py:7:5: error: tile.prelu needs an FP16 or FP32 tile, got INT32");
  auto mixed = Create("tile.prelu", {Loaded(DataType::FP32), Loaded(DataType::FP16), tmp});
  ASSERT_FALSE(mixed);
  EXPECT_EQ(mixed.error().message,
            "the slope of tile.prelu must match its operand in shape, dtype and valid region, got "
            "pl.Tile[[16, 32], pl.FP16, pl.Mem.Vec] and pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec]");
  auto narrowed = testing::Op("tile.load", {Tensor("s", {16, 32}), Ints({0, 0}), Ints({16, 32}), Ints({9, 32})});
  auto ragged_slope = Create("tile.prelu", {Loaded(DataType::FP32), narrowed, tmp});
  ASSERT_FALSE(ragged_slope);
  EXPECT_NE(ragged_slope.error().message.find("valid_shape=[9, 32]"), std::string::npos)
      << ragged_slope.error().message;
}

TEST(TileElementwiseOps, LeakyReluErrors) {
  auto ints = Create("tile.lrelu", {Loaded(DataType::INT32), Float(0.1)});
  ASSERT_FALSE(ints);
  EXPECT_EQ(ints.error().str(), "k.py:7:5: error: tile.lrelu needs a floating-point tile, got INT32");
  auto tile_slope = Create("tile.lrelu", {Loaded(DataType::FP32), Loaded(DataType::FP32)});
  ASSERT_FALSE(tile_slope);
  EXPECT_NE(tile_slope.error().message.find("the slope of tile.lrelu"), std::string::npos)
      << tile_slope.error().message;
}

TEST(TileElementwiseOps, SineAndCosineTakeFp32Only) {
  for (const char* op : {"tile.sin", "tile.cos"}) {
    auto ok = Create(op, {Loaded(DataType::FP32)});
    ASSERT_TRUE(ok) << ok.error().str();
    EXPECT_EQ((*ok)->type()->str(), "pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec]");
    auto half = Create(op, {Loaded(DataType::FP16)});
    ASSERT_FALSE(half);
    EXPECT_EQ(half.error().str(),
              fmt::format("k.py:7:5: error: {} needs an FP32 tile, got FP16\n  help: cast the tile to pl.FP32 first", op));
  }
}

TEST(TileElementwiseOps, NotTakes16BitIntegers) {
  for (DataType dtype : {DataType::INT16, DataType::UINT16}) {
    auto ok = Create("tile.not", {Loaded(dtype)});
    ASSERT_TRUE(ok) << ok.error().str();
    EXPECT_EQ((*ok)->type()->str(), fmt::format("pl.Tile[[16, 32], pl.{}, pl.Mem.Vec]", DataTypeName(dtype)));
  }
  // Printed as the DSL spells it: `not` is a Python keyword.
  auto x = std::make_shared<Var>("x", Loaded(DataType::INT16)->type(), Span{});
  auto on_var = Create("tile.not", {x});
  ASSERT_TRUE(on_var) << on_var.error().str();
  EXPECT_EQ(PrintExpr(*on_var), "pl.tile.not_(x)");
  auto wide = Create("tile.not", {Loaded(DataType::INT32)});
  ASSERT_FALSE(wide);
  EXPECT_EQ(wide.error().str(), "k.py:7:5: error: tile.not needs an INT16 or UINT16 tile, got INT32");
  auto floats = Create("tile.not", {Loaded(DataType::FP16)});
  ASSERT_FALSE(floats);
  EXPECT_EQ(floats.error().message, "tile.not needs an INT16 or UINT16 tile, got FP16");
}

TEST(TileElementwiseOps, HighPrecisionIsAnAttributeOfDivAndLog) {
  auto div = Create("tile.div", {Loaded(DataType::FP16), Loaded(DataType::FP16)}, {{"high_precision", true}});
  ASSERT_TRUE(div) << div.error().str();
  EXPECT_EQ((*div)->type()->str(), "pl.Tile[[16, 32], pl.FP16, pl.Mem.Vec]");
  EXPECT_EQ(FindAttr<bool>((*div)->kwargs(), "high_precision"), true);
  auto log = Create("tile.log", {Loaded(DataType::FP32)}, {{"high_precision", false}});
  ASSERT_TRUE(log) << log.error().str();
  EXPECT_EQ((*log)->type()->str(), "pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec]");
  // Integer division has no high-precision template.
  auto ints = Create("tile.div", {Loaded(DataType::INT32), Loaded(DataType::INT32)}, {{"high_precision", true}});
  ASSERT_FALSE(ints);
  EXPECT_EQ(ints.error().str(), "k.py:7:5: error: tile.div(high_precision=True) needs a floating-point tile, got INT32");
  auto plain = Create("tile.div", {Loaded(DataType::INT32), Loaded(DataType::INT32)}, {{"high_precision", false}});
  EXPECT_TRUE(plain) << plain.error().str();
  // Only div and log have the attribute.
  auto exp = Create("tile.exp", {Loaded(DataType::FP32)}, {{"high_precision", true}});
  EXPECT_FALSE(exp);
}

// Upstream narrows a scalar to the tile's dtype: a floating-point constant holding an integer is that
// integer; any other floating-point scalar with an integer tile is refused.
TEST(TileElementwiseOps, IntegerTilesTakeIntegralFloatConstants) {
  auto exact = Create("tile.subs", {Loaded(DataType::INT16), Float(2.0)});
  ASSERT_TRUE(exact) << exact.error().str();
  EXPECT_EQ((*exact)->type()->str(), "pl.Tile[[16, 32], pl.INT16, pl.Mem.Vec]");
  auto fraction = Create("tile.subs", {Loaded(DataType::INT16), Float(2.5)});
  ASSERT_FALSE(fraction);
  EXPECT_EQ(fraction.error().str(),
            "k.py:7:5: error: tile.subs combines an integer INT16 tile with a floating-point scalar\n"
            "  help: cast the tile to a floating-point dtype first");
}

}  // namespace
}  // namespace pypto::ir
