// Type deduction of the index-of-extremum reductions (tile.row_argmax/argmin, tile.col_argmax/
// argmin): INT32 indices along the kept axis, the valid region carried along it, and the errors for
// operands the PTO instructions do not take.
#include <gtest/gtest.h>

#include "pypto/ir/op_registry.h"
#include "sample_programs.h"

namespace pypto::ir {
namespace {

Result<CallPtr> Create(std::string_view op, std::vector<ExprPtr> args) {
  return OpRegistry::Get().CreateCall(op, std::move(args), {}, Span{"k.py", 6, 13});
}

ExprPtr Ints(const Shape& values) {
  std::vector<ExprPtr> elements;
  for (int64_t v : values) elements.push_back(std::make_shared<ConstInt>(v, DataType::INDEX));
  return std::make_shared<TupleLiteral>(std::move(elements));
}

// A Vec tile loaded from a tensor of its shape, narrowed to `valid` when one is given.
ExprPtr TileOf(const Shape& shape, DataType dtype = DataType::FP32, const Shape& valid = {}) {
  std::vector<ExprPtr> args = {testing::Tensor("x", shape, dtype), Ints(Shape(shape.size(), 0)), Ints(shape)};
  if (!valid.empty()) args.push_back(Ints(valid));
  return testing::Op("tile.load", std::move(args));
}

std::string TypeOf(const Result<CallPtr>& call) { return call ? (*call)->type()->str() : call.error().str(); }

TEST(TileArgReduceOps, RowFormsGiveAColumnOfInt32Indices) {
  for (const char* op : {"tile.row_argmax", "tile.row_argmin"}) {
    EXPECT_EQ(TypeOf(Create(op, {TileOf({16, 64}), TileOf({16, 64})})), "pl.Tile[[16, 1], pl.INT32, pl.Mem.Vec]")
        << op;
    EXPECT_EQ(TypeOf(Create(op, {TileOf({8, 128}, DataType::FP16), TileOf({8, 128}, DataType::FP16)})),
              "pl.Tile[[8, 1], pl.INT32, pl.Mem.Vec]")
        << op;
  }
}

TEST(TileArgReduceOps, ColumnFormsGiveARowOfInt32Indices) {
  for (const char* op : {"tile.col_argmax", "tile.col_argmin"}) {
    EXPECT_EQ(TypeOf(Create(op, {TileOf({16, 64}), TileOf({16, 64})})), "pl.Tile[[1, 64], pl.INT32, pl.Mem.Vec]")
        << op;
  }
}

TEST(TileArgReduceOps, ResultsKeepTheLeadingOnes) {
  EXPECT_EQ(TypeOf(Create("tile.row_argmax", {TileOf({1, 1, 16, 128}), TileOf({1, 1, 16, 128})})),
            "pl.Tile[[1, 1, 16, 1], pl.INT32, pl.Mem.Vec]");
  EXPECT_EQ(TypeOf(Create("tile.col_argmin", {TileOf({1, 16, 128}), TileOf({1, 16, 128})})),
            "pl.Tile[[1, 1, 128], pl.INT32, pl.Mem.Vec]");
}

// The indices cover the valid region: a row form is valid in the operand's valid rows, a column form
// in its valid columns.
TEST(TileArgReduceOps, TheValidRegionCarriesAlongTheKeptAxis) {
  const ExprPtr ragged = TileOf({16, 16}, DataType::FP32, {8, 12});
  EXPECT_EQ(TypeOf(Create("tile.row_argmin", {ragged, TileOf({16, 16})})),
            "pl.Tile[[16, 1], pl.INT32, pl.Mem.Vec, pl.TileView(valid_shape=[8, 1])]");
  EXPECT_EQ(TypeOf(Create("tile.col_argmax", {ragged, TileOf({16, 16})})),
            "pl.Tile[[1, 16], pl.INT32, pl.Mem.Vec, pl.TileView(valid_shape=[1, 12])]");
  // Narrowed only along the reduced axis: every index is valid.
  EXPECT_EQ(TypeOf(Create("tile.row_argmax", {TileOf({16, 16}, DataType::FP32, {16, 8}), TileOf({16, 16})})),
            "pl.Tile[[16, 1], pl.INT32, pl.Mem.Vec]");
}

TEST(TileArgReduceOps, IndicesOfIntegersAreRefused) {
  auto ints = Create("tile.row_argmax", {TileOf({16, 16}, DataType::INT32), TileOf({16, 16}, DataType::INT32)});
  ASSERT_FALSE(ints);
  EXPECT_EQ(ints.error().str(),
            "k.py:6:13: error: the operand of tile.row_argmax must be an FP16 or FP32 tile, got pl.Tile[[16, 16], "
            "pl.INT32, pl.Mem.Vec]\n  help: pl.cast the tile to pl.FP32 first");
}

TEST(TileArgReduceOps, TheScratchTileMatchesTheOperand) {
  auto dtype = Create("tile.col_argmin", {TileOf({16, 16}), TileOf({16, 16}, DataType::FP16)});
  ASSERT_FALSE(dtype);
  EXPECT_EQ(dtype.error().message,
            "the scratch tile of tile.col_argmin must be a [16, 16] FP32 tile like its operand, got pl.Tile[[16, "
            "16], pl.FP16, pl.Mem.Vec]");
  // Larger is refused too: the instructions take the extent to scan from the scratch tile.
  auto larger = Create("tile.row_argmax", {TileOf({16, 16}), TileOf({16, 128})});
  ASSERT_FALSE(larger);
  EXPECT_EQ(larger.error().message,
            "the scratch tile of tile.row_argmax must be a [16, 16] FP32 tile like its operand, got pl.Tile[[16, "
            "128], pl.FP32, pl.Mem.Vec]");
  auto scalar = Create("tile.row_argmin", {TileOf({16, 16}), std::make_shared<ConstInt>(0, DataType::INDEX)});
  ASSERT_FALSE(scalar);
  EXPECT_EQ(scalar.error().message.rfind("the scratch tile of tile.row_argmin must be a tile", 0), 0u)
      << scalar.error().message;
}

TEST(TileArgReduceOps, AnEmptyReducedAxisIsRefused) {
  auto empty = Create("tile.col_argmax", {TileOf({16, 16}, DataType::FP32, {0, 16}), TileOf({16, 16})});
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().message,
            "tile.col_argmax of pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape=[0, 16])] has no "
            "element to take the index of: its valid region is empty along the reduced axis");
}

TEST(TileArgReduceOps, TheScratchTileIsRequired) {
  auto missing = Create("tile.row_argmax", {TileOf({16, 16})});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "'tile.row_argmax' takes 2 arguments (tile, tmp_tile), got 1");
}

}  // namespace
}  // namespace pypto::ir
