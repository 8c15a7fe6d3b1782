// Matrix ops on tiles of rank above 2 whose leading dimensions are 1 ([1, 1, M, N] blocks of 4-D
// tensors): each is the matrix of its last two dimensions, results keep the leading 1s, and a
// leading dimension above 1 (a batch) is refused by name (matmul and transpose take batches:
// matmul_ops_test.cpp).
#include <gtest/gtest.h>

#include "pypto/ir/op_registry.h"
#include "sample_programs.h"

namespace pypto::ir {
namespace {

Result<CallPtr> Create(std::string_view op, std::vector<ExprPtr> args, Call::Kwargs kwargs = {}) {
  return OpRegistry::Get().CreateCall(op, std::move(args), std::move(kwargs), Span{"k.py", 7, 5});
}

ExprPtr Ints(const Shape& values) {
  std::vector<ExprPtr> elements;
  for (int64_t v : values) elements.push_back(std::make_shared<ConstInt>(v, DataType::INDEX));
  return std::make_shared<TupleLiteral>(std::move(elements));
}

// A Vec tile loaded whole from a tensor of its shape.
ExprPtr TileOf(const Shape& shape, DataType dtype = DataType::FP32) {
  return testing::Op("tile.load", {testing::Tensor("x", shape, dtype), Ints(Shape(shape.size(), 0)), Ints(shape)});
}

std::string TypeOf(const Result<CallPtr>& call) { return call ? (*call)->type()->str() : call.error().str(); }

TEST(MatrixTile, RowSumKeepsTheLeadingOnes) {
  auto tile = TileOf({1, 1, 16, 128});
  EXPECT_EQ(TypeOf(Create("tile.row_sum", {tile, TileOf({1, 1, 16, 128})})),
            "pl.Tile[[1, 1, 16, 1], pl.FP32, pl.Mem.Vec]");
  EXPECT_EQ(TypeOf(Create("tile.col_max", {tile})), "pl.Tile[[1, 1, 1, 128], pl.FP32, pl.Mem.Vec]");
}

TEST(MatrixTile, RowExpandTakesAVectorOfTheTilesRows) {
  auto tile = TileOf({1, 1, 16, 128});
  EXPECT_EQ(TypeOf(Create("tile.row_expand_div", {tile, TileOf({1, 1, 16, 1})})),
            "pl.Tile[[1, 1, 16, 128], pl.FP32, pl.Mem.Vec]");
  EXPECT_EQ(TypeOf(Create("tile.row_expand_mul", {tile, TileOf({16, 1})})),
            "pl.Tile[[1, 1, 16, 128], pl.FP32, pl.Mem.Vec]");
  EXPECT_EQ(TypeOf(Create("tile.col_expand_mul", {tile, TileOf({1, 128})})),
            "pl.Tile[[1, 1, 16, 128], pl.FP32, pl.Mem.Vec]");
  auto short_vec = Create("tile.row_expand_div", {tile, TileOf({1, 1, 8, 1})});
  ASSERT_FALSE(short_vec);
  EXPECT_EQ(short_vec.error().message,
            "tile.row_expand_div broadcasts a [16, 1] FP32 vector across pl.Tile[[1, 1, 16, 128], pl.FP32, "
            "pl.Mem.Vec], got pl.Tile[[1, 1, 8, 1], pl.FP32, pl.Mem.Vec]");
}

TEST(MatrixTile, MatmulWithBTransMultipliesTheLastTwoDimensions) {
  auto q = TileOf({1, 1, 16, 128}, DataType::BF16);
  auto k = TileOf({1, 1, 64, 128}, DataType::BF16);
  EXPECT_EQ(TypeOf(Create("tile.matmul", {q, k}, {{"b_trans", true}, {"out_dtype", DataType::FP32}})),
            "pl.Tile[[1, 1, 16, 64], pl.FP32, pl.Mem.Acc]");
  EXPECT_EQ(TypeOf(Create("tile.matmul", {q, TileOf({1, 1, 128, 64}, DataType::BF16)})),
            "pl.Tile[[1, 1, 16, 64], pl.FP32, pl.Mem.Acc]");
  // Ranks may differ: the product keeps the larger rank's leading 1s, either way round.
  EXPECT_EQ(TypeOf(Create("tile.matmul", {q, TileOf({128, 64}, DataType::BF16)})),
            "pl.Tile[[1, 1, 16, 64], pl.FP32, pl.Mem.Acc]");
  EXPECT_EQ(TypeOf(Create("tile.matmul", {TileOf({16, 128}, DataType::BF16), TileOf({1, 64, 128}, DataType::BF16)},
                          {{"b_trans", true}})),
            "pl.Tile[[1, 16, 64], pl.FP32, pl.Mem.Acc]");
}

TEST(MatrixTile, ALeadingDimensionAboveOneIsABatchAndRefusedByMatrixOps) {
  auto reduce = Create("tile.row_sum", {TileOf({1, 2, 16, 128}), TileOf({1, 2, 16, 128})});
  ASSERT_FALSE(reduce);
  EXPECT_EQ(reduce.error().message,
            "the operand of tile.row_sum must be a matrix, but dimension 1 of pl.Tile[[1, 2, 16, 128], pl.FP32, "
            "pl.Mem.Vec] is 2: a tile of rank 4 is read as the matrix of its last two dimensions, so the others "
            "must be 1");
  EXPECT_EQ(reduce.error().hint, "this op does not take batches of matrices yet; loop over the leading dimension");
  EXPECT_EQ(reduce.error().span.line, 7);
}

TEST(MatrixTile, TransposeSwapsTheLastTwoAxes) {
  auto tile = TileOf({1, 1, 16, 128});
  EXPECT_EQ(TypeOf(Create("tile.transpose", {tile}, {{"axis1", int64_t{2}}, {"axis2", int64_t{3}}})),
            "pl.Tile[[1, 1, 128, 16], pl.FP32, pl.Mem.Vec]");
  auto wrong = Create("tile.transpose", {tile}, {{"axis1", int64_t{0}}, {"axis2", int64_t{3}}});
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().message, "a 4-D tile transposes axes 2 and 3 (or -2 and -1), got 0 and 3");
}

}  // namespace
}  // namespace pypto::ir
