// Type deduction of the ops added for upstream's partial-combine and triangular-mask tests:
// tile.part_add / part_mul / part_max / part_min (the first operand's type and valid region, whatever
// the second's) and tile.tri (a generated tile of the requested dtype, narrowed to valid_shape).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"
#include "sample_programs.h"

namespace pypto::ir {
namespace {

using testing::Ints;
using testing::Tensor;

ExprPtr Index(int64_t value) { return std::make_shared<ConstInt>(value, DataType::INDEX, Span{}); }

// A [rows, cols] tile of which only [valid_rows, valid_cols] holds data.
ExprPtr Ragged(DataType dtype, int64_t rows, int64_t cols, int64_t valid_rows, int64_t valid_cols) {
  return testing::Op("tile.load", {Tensor("x", {rows, cols}, dtype), Ints({0, 0}), Ints({rows, cols}),
                                   Ints({valid_rows, valid_cols})});
}

Result<CallPtr> Create(std::string_view op, std::vector<ExprPtr> args, Call::Kwargs kwargs = {}) {
  return OpRegistry::Get().CreateCall(op, std::move(args), std::move(kwargs), Span{"k.py", 7, 5});
}

TEST(TilePartialOps, TheResultIsValidWhereTheFirstOperandIs) {
  for (const char* op : {"tile.part_add", "tile.part_mul", "tile.part_max", "tile.part_min"}) {
    auto narrow_second = Create(op, {Ragged(DataType::FP32, 16, 16, 16, 16), Ragged(DataType::FP32, 16, 16, 8, 16)});
    ASSERT_TRUE(narrow_second) << narrow_second.error().str();
    EXPECT_EQ((*narrow_second)->type()->str(), "pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec]") << op;
    auto narrow_first = Create(op, {Ragged(DataType::INT16, 16, 16, 4, 12), Ragged(DataType::INT16, 16, 16, 16, 16)});
    ASSERT_TRUE(narrow_first) << narrow_first.error().str();
    EXPECT_EQ((*narrow_first)->type()->str(),
              "pl.Tile[[16, 16], pl.INT16, pl.Mem.Vec, pl.TileView(valid_shape=[4, 12])]")
        << op;
  }
}

TEST(TilePartialOps, OperandsOfAnotherShapeOrDtypeAreRefused) {
  auto mixed = Create("tile.part_max", {Ragged(DataType::FP32, 16, 16, 16, 16), Ragged(DataType::FP16, 16, 16, 8, 8)});
  ASSERT_FALSE(mixed);
  EXPECT_EQ(mixed.error().str(),
            "k.py:7:5: error: tile.part_max combines tiles of one shape and dtype, got pl.Tile[[16, 16], pl.FP32, "
            "pl.Mem.Vec] and pl.Tile[[16, 16], pl.FP16, pl.Mem.Vec, pl.TileView(valid_shape=[8, 8])]\n"
            "  help: the valid regions may differ; the tiles themselves may not");
}

TEST(TileTriangleOps, MakesATileOfTheDtypeNarrowedToTheValidShape) {
  auto plain = Create("tile.tri", {Index(0), Ints({16, 32})});
  ASSERT_TRUE(plain) << plain.error().str();
  EXPECT_EQ((*plain)->type()->str(), "pl.Tile[[16, 32], pl.INT32, pl.Mem.Vec]");
  auto narrowed = Create("tile.tri", {Index(-2), Ints({16, 32}), Ints({9, 21})},
                         {{"dtype", DataType::FP16}, {"upper", true}});
  ASSERT_TRUE(narrowed) << narrowed.error().str();
  EXPECT_EQ((*narrowed)->type()->str(), "pl.Tile[[16, 32], pl.FP16, pl.Mem.Vec, pl.TileView(valid_shape=[9, 21])]");
  EXPECT_EQ(CallAffinity(**narrowed), CoreAffinity::Vector);
}

TEST(TileTriangleOps, Errors) {
  auto float_diagonal = Create("tile.tri", {std::make_shared<ConstFloat>(1.5, DataType::FP32, Span{}), Ints({16, 32})});
  ASSERT_FALSE(float_diagonal);
  EXPECT_EQ(float_diagonal.error().str(),
            "k.py:7:5: error: the diagonal of pl.tile.tri must be an integer scalar, got pl.Scalar[pl.FP32]");
  auto bad_dtype = Create("tile.tri", {Index(0), Ints({16, 32})}, {{"dtype", DataType::INT64}});
  ASSERT_FALSE(bad_dtype);
  EXPECT_EQ(bad_dtype.error().message,
            "pl.tile.tri makes 8-, 16- or 32-bit integer, FP16, BF16 or FP32 tiles, not INT64");
  auto rank3 = Create("tile.tri", {Index(0), Ints({2, 16, 32})});
  ASSERT_FALSE(rank3);
  EXPECT_EQ(rank3.error().message, "pl.tile.tri makes a 2-D tile [rows, cols], got [2, 16, 32]");
  auto too_wide = Create("tile.tri", {Index(0), Ints({16, 32}), Ints({16, 33})});
  ASSERT_FALSE(too_wide);
  EXPECT_EQ(too_wide.error().message,
            "the valid_shape of pl.tile.tri extent 33 of dimension 1 is outside the tile's 32 (tile shape [16, 32])");
}

}  // namespace
}  // namespace pypto::ir
