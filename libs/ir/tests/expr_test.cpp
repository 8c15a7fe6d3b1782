#include <gtest/gtest.h>

#include "pypto/ir/printer.h"
#include "sample_programs.h"

namespace pypto::ir {
namespace {

ExprPtr Int(int64_t v) { return std::make_shared<ConstInt>(v, DataType::INDEX); }

int64_t Folded(BinaryOp op, int64_t a, int64_t b) {
  auto result = MakeBinary(op, Int(a), Int(b), Span{});
  EXPECT_TRUE(result) << result.error().str();
  auto value = AsConstInt(*result);
  EXPECT_TRUE(value.has_value());
  return value.value_or(0);
}

TEST(MakeBinary, FoldsIntegersWithPythonSemantics) {
  EXPECT_EQ(Folded(BinaryOp::Mul, 4, 128), 512);
  EXPECT_EQ(Folded(BinaryOp::FloorDiv, 512, 128), 4);
  EXPECT_EQ(Folded(BinaryOp::FloorDiv, -7, 2), -4);
  EXPECT_EQ(Folded(BinaryOp::FloorMod, -7, 2), 1);
  EXPECT_EQ(Folded(BinaryOp::FloorMod, 7, -2), -1);
  EXPECT_EQ(Folded(BinaryOp::Max, 3, 9), 9);
  EXPECT_EQ(Folded(BinaryOp::Shl, 1, 10), 1024);
  EXPECT_EQ(Folded(BinaryOp::Shr, -7, 1), -4);  // arithmetic, as Python's >>
}

TEST(MakeBinary, ShiftsTakeIntegersAndACountBelow64) {
  auto i = std::make_shared<Var>("i", std::make_shared<ScalarType>(DataType::INDEX));
  auto shifted = MakeBinary(BinaryOp::Shl, Int(1), *MakeBinary(BinaryOp::Add, i, Int(6), Span{}), Span{});
  ASSERT_TRUE(shifted);
  EXPECT_EQ(PrintExpr(*shifted), "1 << (i + 6)");
  auto negative = MakeBinary(BinaryOp::Shr, i, Int(-1), Span{"k.py", 3, 9});
  ASSERT_FALSE(negative);
  EXPECT_EQ(negative.error().str(), "k.py:3:9: error: shift count -1 is out of range; it must be in [0, 64)");
  auto wide = MakeBinary(BinaryOp::Shl, Int(1), Int(64), Span{});
  ASSERT_FALSE(wide);
  auto half = std::make_shared<ConstFloat>(0.5, DataType::FP32);
  auto fractional = MakeBinary(BinaryOp::Shl, i, half, Span{});
  ASSERT_FALSE(fractional);
  EXPECT_EQ(fractional.error().message, "'<<' shifts integers, got pl.Scalar[pl.INDEX] and pl.Scalar[pl.FP32]");
}

TEST(MakeBinary, KeepsVariablesSymbolic) {
  auto i = std::make_shared<Var>("i", std::make_shared<ScalarType>(DataType::INDEX));
  auto product = MakeBinary(BinaryOp::Mul, i, Int(128), Span{});
  ASSERT_TRUE(product);
  auto sum = MakeBinary(BinaryOp::Add, *product, Int(1), Span{});
  ASSERT_TRUE(sum);
  EXPECT_EQ(PrintExpr(*sum), "(i * 128) + 1");
  EXPECT_EQ((*sum)->type()->str(), "pl.Scalar[pl.INDEX]");
  auto less = MakeBinary(BinaryOp::Lt, i, Int(4), Span{});
  EXPECT_EQ((*less)->type()->str(), "pl.Scalar[pl.BOOL]");
}

TEST(MakeBinary, RejectsDivisionByZeroAndNonScalars) {
  auto zero = MakeBinary(BinaryOp::FloorDiv, Int(1), Int(0), Span{"k.py", 4, 7});
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().str(), "k.py:4:7: error: integer division by zero");
  auto tensor = testing::Tensor("a", {4});
  auto bad = MakeBinary(BinaryOp::Add, tensor, Int(1), Span{});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "'+' needs scalar operands, got pl.Tensor[[4], pl.FP32] and pl.Scalar[pl.INDEX]");
}

TEST(Printer, LoopsPrintAsTheirDslForm) {
  auto i = std::make_shared<Var>("i", std::make_shared<ScalarType>(DataType::INDEX));
  auto a = testing::Tensor("a", {64, 16});
  auto offset = *MakeBinary(BinaryOp::Mul, i, Int(16), Span{});
  auto load = testing::Op("tile.load", {a, std::make_shared<TupleLiteral>(std::vector<ExprPtr>{offset, Int(0)}),
                                        testing::Ints({16, 16})});
  auto tile = testing::Local("t", load);
  auto body = std::make_shared<SeqStmts>(std::vector<StmtPtr>{testing::Assign(tile, load)});
  auto loop = std::make_shared<ForStmt>(i, Int(1), Int(4), Int(2), body, ForKind::Parallel);
  Function fn("f", {a}, {}, {}, std::make_shared<SeqStmts>(std::vector<StmtPtr>{loop}), FunctionType::InCore);
  EXPECT_EQ(PrintFunction(fn),
            "@pl.function(type=pl.FunctionType.InCore)\n"
            "def f(self, a: pl.Tensor[[64, 16], pl.FP32]):\n"
            "    for i in pl.parallel(1, 4, 2):\n"
            "        t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [i * 16, 0], [16, 16])\n");
}

}  // namespace
}  // namespace pypto::ir
