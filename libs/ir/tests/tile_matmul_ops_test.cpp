// Type deduction of the matmul family (tile.matmul, matmul_acc, matmul_bias, gemv, gemv_acc,
// gemv_bias): result types with valid regions, batches of matrices and how they broadcast, the
// bias row, init_cond, and the errors for operands that do not fit.
#include <gtest/gtest.h>

#include "pypto/ir/op_registry.h"
#include "sample_programs.h"

namespace pypto::ir {
namespace {

ExprPtr Ints(const Shape& values) {
  std::vector<ExprPtr> elements;
  for (int64_t v : values) elements.push_back(std::make_shared<ConstInt>(v, DataType::INDEX));
  return std::make_shared<TupleLiteral>(std::move(elements));
}

Result<CallPtr> Create(std::string_view op, std::vector<ExprPtr> args, Call::Kwargs kwargs = {}) {
  return OpRegistry::Get().CreateCall(op, std::move(args), std::move(kwargs), Span{"k.py", 6, 13});
}

std::string TypeOf(const Result<CallPtr>& call) { return call ? (*call)->type()->str() : call.error().str(); }
std::string ErrorOf(const Result<CallPtr>& call) { return call ? "no error" : call.error().message; }

ExprPtr Index(int64_t value) { return std::make_shared<ConstInt>(value, DataType::INDEX, Span{}); }

// A Mat tile loaded whole, or narrowed to `valid`.
ExprPtr Mat(const Shape& shape, DataType dtype = DataType::FP32, const Shape& valid = {}) {
  std::vector<ExprPtr> args = {testing::Tensor("x", shape, dtype), Ints(Shape(shape.size(), 0)), Ints(shape)};
  if (!valid.empty()) args.push_back(Ints(valid));
  return testing::OpWithKwargs("tile.load", std::move(args), {{"target_memory", MemorySpace::Mat}});
}

ExprPtr Acc(const Shape& shape, DataType dtype = DataType::FP32) {
  return testing::OpWithKwargs("tile.create", {Ints(shape)}, {{"dtype", dtype}, {"target_memory", MemorySpace::Acc}});
}

TEST(TileMatmulOps, TheProductKeepsTheLhsValidRowsAndTheRhsValidColumns) {
  EXPECT_EQ(TypeOf(Create("tile.matmul", {Mat({16, 64}, DataType::FP32, {8, 64}), Mat({64, 32})})),
            "pl.Tile[[16, 32], pl.FP32, pl.Mem.Acc, pl.TileView(valid_shape=[8, 32])]");
  EXPECT_EQ(TypeOf(Create("tile.matmul", {Mat({16, 64}), Mat({64, 32}, DataType::FP32, {64, 30})})),
            "pl.Tile[[16, 32], pl.FP32, pl.Mem.Acc, pl.TileView(valid_shape=[16, 30])]");
  // Transposed operands: the lhs's rows are its columns, the rhs's columns its rows.
  EXPECT_EQ(TypeOf(Create("tile.matmul", {Mat({64, 16}, DataType::FP32, {64, 8}), Mat({32, 64})},
                          {{"a_trans", true}, {"b_trans", true}})),
            "pl.Tile[[16, 32], pl.FP32, pl.Mem.Acc, pl.TileView(valid_shape=[8, 32])]");
}

TEST(TileMatmulOps, TheRhsMustHoldEveryValidKOfTheLhs) {
  EXPECT_EQ(TypeOf(Create("tile.matmul", {Mat({16, 64}, DataType::FP32, {16, 24}), Mat({64, 32})})),
            "pl.Tile[[16, 32], pl.FP32, pl.Mem.Acc]");
  auto short_rhs = Create("tile.matmul", {Mat({16, 64}), Mat({64, 32}, DataType::FP32, {24, 32})});
  EXPECT_EQ(ErrorOf(short_rhs),
            "tile.matmul sums 64 valid elements of K from pl.Tile[[16, 64], pl.FP32, pl.Mem.Mat] but pl.Tile[[64, 32], "
            "pl.FP32, pl.Mem.Mat, pl.TileView(valid_shape=[24, 32])] has only 24 of them");
  EXPECT_EQ(short_rhs.error().span.str(), "k.py:6:13");
}

TEST(TileMatmulOps, BatchesBroadcastAsInTorchMatmul) {
  EXPECT_EQ(TypeOf(Create("tile.matmul", {Mat({2, 16, 32}), Mat({2, 32, 48})})),
            "pl.Tile[[2, 16, 48], pl.FP32, pl.Mem.Acc]");
  EXPECT_EQ(TypeOf(Create("tile.matmul", {Mat({16, 32}), Mat({3, 32, 48})})),
            "pl.Tile[[3, 16, 48], pl.FP32, pl.Mem.Acc]");
  EXPECT_EQ(TypeOf(Create("tile.matmul", {Mat({2, 1, 16, 32}), Mat({3, 32, 48})})),
            "pl.Tile[[2, 3, 16, 48], pl.FP32, pl.Mem.Acc]");
  EXPECT_EQ(TypeOf(Create("tile.matmul", {Mat({2, 16, 32}), Mat({2, 48, 32})}, {{"b_trans", true}})),
            "pl.Tile[[2, 16, 48], pl.FP32, pl.Mem.Acc]");
  auto disagree = Create("tile.matmul", {Mat({2, 16, 32}), Mat({3, 32, 48})});
  EXPECT_EQ(ErrorOf(disagree),
            "tile.matmul cannot broadcast the batch dimensions of pl.Tile[[2, 16, 32], pl.FP32, pl.Mem.Mat] and "
            "pl.Tile[[3, 32, 48], pl.FP32, pl.Mem.Mat]: 2 against 3");
  EXPECT_EQ(disagree.error().hint, "each pair of leading dimensions must be equal, or one of them 1");
}

TEST(TileMatmulOps, MatmulAccTakesABooleanInitCond) {
  auto k0 = testing::Scalar("k0", DataType::INDEX);
  auto first = MakeBinary(BinaryOp::Eq, k0, Index(0), Span{});
  ASSERT_TRUE(first);
  EXPECT_EQ(TypeOf(Create("tile.matmul_acc", {Acc({16, 32}), Mat({16, 64}), Mat({64, 32}), *first})),
            "pl.Tile[[16, 32], pl.FP32, pl.Mem.Acc]");
  EXPECT_EQ(ErrorOf(Create("tile.matmul_acc", {Acc({16, 32}), Mat({16, 64}), Mat({64, 32}), Mat({1, 1})})),
            "the init_cond of tile.matmul_acc must be a boolean scalar, got pl.Tile[[1, 1], pl.FP32, pl.Mem.Mat]");
}

TEST(TileMatmulOps, MatmulBiasTakesARowOfTheAccumulatorDtype) {
  EXPECT_EQ(TypeOf(Create("tile.matmul_bias", {Mat({16, 64}, DataType::BF16), Mat({64, 32}, DataType::BF16),
                                               Mat({1, 32})})),
            "pl.Tile[[16, 32], pl.FP32, pl.Mem.Acc]");
  EXPECT_EQ(ErrorOf(Create("tile.matmul_bias", {Mat({16, 64}, DataType::BF16), Mat({64, 32}, DataType::BF16),
                                                Mat({1, 32}, DataType::BF16)})),
            "the bias of tile.matmul_bias must be a [1, 32] FP32 row (the product's columns and accumulator dtype), "
            "got pl.Tile[[1, 32], pl.BF16, pl.Mem.Mat]");
  EXPECT_EQ(ErrorOf(Create("tile.matmul_bias", {Mat({16, 64}), Mat({64, 32}), Mat({2, 32})})),
            "the bias of tile.matmul_bias must be a [1, 32] FP32 row (the product's columns and accumulator dtype), "
            "got pl.Tile[[2, 32], pl.FP32, pl.Mem.Mat]");
  EXPECT_EQ(ErrorOf(Create("tile.matmul_bias", {Mat({16, 64}), Mat({64, 32}), Mat({1, 32}, DataType::FP32, {1, 16})})),
            "the bias of tile.matmul_bias has 16 valid columns but the product has 32");
  // A bias already placed must be in Bias.
  auto in_left = testing::OpWithKwargs("tile.move", {Mat({1, 32})}, {{"target_memory", MemorySpace::Left}});
  EXPECT_EQ(ErrorOf(Create("tile.matmul_bias", {Mat({16, 64}), Mat({64, 32}), in_left})),
            "the bias of tile.matmul_bias must be in Bias, got pl.Tile[[1, 32], pl.FP32, pl.Mem.Left]");
}

TEST(TileMatmulOps, GemvMultipliesOneRow) {
  EXPECT_EQ(TypeOf(Create("tile.gemv", {Mat({1, 512}, DataType::INT8), Mat({512, 64}, DataType::INT8)})),
            "pl.Tile[[1, 64], pl.INT32, pl.Mem.Acc]");
  EXPECT_EQ(TypeOf(Create("tile.gemv", {Mat({1, 256}, DataType::FP16), Mat({256, 64}, DataType::FP16, {256, 30})},
                          {{"acc_phase", std::string("final")}})),
            "pl.Tile[[1, 64], pl.FP32, pl.Mem.Acc, pl.TileView(valid_shape=[1, 30])]");
  auto two_rows = Create("tile.gemv", {Mat({2, 128}), Mat({128, 64})});
  EXPECT_EQ(ErrorOf(two_rows),
            "the left operand of tile.gemv must be a single row [1, K], got pl.Tile[[2, 128], pl.FP32, pl.Mem.Mat]");
  EXPECT_EQ(two_rows.error().hint, "use tile.matmul for more rows");
  EXPECT_EQ(ErrorOf(Create("tile.gemv", {Mat({1, 128}), Mat({128, 64})}, {{"acc_phase", std::string("last")}})),
            "the acc_phase of tile.gemv is 'unspecified', 'partial' or 'final', got 'last'");
}

TEST(TileMatmulOps, GemvAccAndGemvBiasCheckTheirAccumulatorAndBias) {
  EXPECT_EQ(TypeOf(Create("tile.gemv_acc", {Acc({1, 64}), Mat({1, 128}), Mat({128, 64})})),
            "pl.Tile[[1, 64], pl.FP32, pl.Mem.Acc]");
  EXPECT_EQ(ErrorOf(Create("tile.gemv_acc", {Acc({16, 64}), Mat({1, 128}), Mat({128, 64})})),
            "tile.gemv_acc adds a pl.Tile[[1, 64], pl.FP32, pl.Mem.Acc] product into a pl.Tile[[16, 64], pl.FP32, "
            "pl.Mem.Acc] accumulator");
  EXPECT_EQ(TypeOf(Create("tile.gemv_bias", {Mat({1, 512}, DataType::INT8), Mat({512, 64}, DataType::INT8),
                                             Mat({1, 64}, DataType::INT32)})),
            "pl.Tile[[1, 64], pl.INT32, pl.Mem.Acc]");
  EXPECT_EQ(ErrorOf(Create("tile.gemv_bias", {Mat({1, 512}, DataType::INT8), Mat({512, 64}, DataType::INT8),
                                              Mat({1, 64})})),
            "the bias of tile.gemv_bias must be a [1, 64] INT32 row (the product's columns and accumulator dtype), got "
            "pl.Tile[[1, 64], pl.FP32, pl.Mem.Mat]");
}

TEST(TileMatmulOps, TheCubeOperandsNameTheirBuffers) {
  const auto* bias = OpRegistry::Get().Find("tile.gemv_bias");
  ASSERT_NE(bias, nullptr);
  const std::vector<std::pair<int, MemorySpace>> expected = {
      {0, MemorySpace::Left}, {1, MemorySpace::Right}, {2, MemorySpace::Bias}};
  EXPECT_EQ(bias->cube_operands, expected);
  EXPECT_EQ(OpRegistry::Get().Find("tile.gemv_acc")->result_aliases_arg, 0);
}

TEST(TileMatmulOps, TransposeViewTransposesEachMatrixOfABatch) {
  EXPECT_EQ(TypeOf(Create("tile.transpose_view", {Mat({2, 48, 16})})), "pl.Tile[[2, 16, 48], pl.FP32, pl.Mem.Mat]");
  EXPECT_EQ(TypeOf(Create("tile.transpose_view", {Mat({48, 16}, DataType::FP32, {40, 16})})),
            "pl.Tile[[16, 48], pl.FP32, pl.Mem.Mat, pl.TileView(valid_shape=[16, 40])]");
}

}  // namespace
}  // namespace pypto::ir
