#include <gtest/gtest.h>

#include "pypto/ir/functor.h"
#include "pypto/ir/printer.h"
#include "pypto/ir/structural_equal.h"
#include "sample_programs.h"

namespace pypto::ir {
namespace {

TEST(Printer, ProgramAsDsl) {
  EXPECT_EQ(PrintProgram(*testing::TileAddProgram(16, 32)),
            "@pl.program\n"
            "class _jit_tile_add:\n"
            "    @pl.function(type=pl.FunctionType.Opaque)\n"
            "    def tile_add(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32], "
            "c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:\n"
            "        with pl.at(level=pl.Level.CORE_GROUP):\n"
            "            tile_a: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 32])\n"
            "            tile_b: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [0, 0], [16, 32])\n"
            "            tile_c: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.add(tile_a, tile_b)\n"
            "            pl.tile.store(tile_c, [0, 0], c)\n"
            "        return c\n");
}

TEST(Printer, DistinctVariablesWithOneHintGetDistinctNames) {
  auto x1 = testing::Tensor("x", {4});
  auto x2 = testing::Tensor("x", {4});
  auto body = std::make_shared<SeqStmts>(std::vector<StmtPtr>{std::make_shared<ReturnStmt>(std::vector<ExprPtr>{x1, x2})});
  Function fn("f", {x1, x2}, {}, {}, body, FunctionType::Opaque);
  EXPECT_EQ(PrintFunction(fn),
            "@pl.function(type=pl.FunctionType.Opaque)\n"
            "def f(self, x: pl.Tensor[[4], pl.FP32], x_1: pl.Tensor[[4], pl.FP32]):\n"
            "    return x, x_1\n");
}

// A loop carrying a scalar, with an if choosing its next value: the DSL's explicit forms.
StmtPtr CarryingLoop(const std::string& carried_name) {
  auto index = std::make_shared<ScalarType>(DataType::INDEX);
  auto i = std::make_shared<Var>("i", index);
  auto init = std::make_shared<Var>("n", index);
  auto acc = std::make_shared<Var>(carried_name, index);
  auto picked = std::make_shared<Var>("p", index);
  auto result = std::make_shared<Var>("r", index);
  auto zero = std::make_shared<ConstInt>(0, DataType::INDEX), four = std::make_shared<ConstInt>(4, DataType::INDEX);
  auto one = std::make_shared<ConstInt>(1, DataType::INDEX);
  auto is_first = *MakeBinary(BinaryOp::Eq, i, zero, {});
  auto branch = std::make_shared<IfStmt>(
      is_first, std::make_shared<YieldStmt>(std::vector<ExprPtr>{zero}),
      std::make_shared<YieldStmt>(std::vector<ExprPtr>{*MakeBinary(BinaryOp::Add, acc, i, {})}),
      std::vector<VarPtr>{picked});
  auto body = std::make_shared<SeqStmts>(
      std::vector<StmtPtr>{branch, std::make_shared<YieldStmt>(std::vector<ExprPtr>{picked})});
  auto loop = std::make_shared<ForStmt>(i, zero, four, one, std::vector<IterArg>{{acc, init}}, body,
                                        std::vector<VarPtr>{result}, ForKind::Sequential);
  return std::make_shared<SeqStmts>(std::vector<StmtPtr>{
      std::make_shared<AssignStmt>(init, four), loop, std::make_shared<ReturnStmt>(std::vector<ExprPtr>{result})});
}

TEST(Printer, LoopCarriesAndIfResultsPrintAsYields) {
  Function fn("f", {}, {}, {}, CarryingLoop("acc"), FunctionType::Opaque);
  EXPECT_EQ(PrintFunction(fn),
            "@pl.function(type=pl.FunctionType.Opaque)\n"
            "def f(self):\n"
            "    n: pl.Scalar[pl.INDEX] = 4\n"
            "    for i, (acc,) in pl.range(4, init_values=(n,)):\n"
            "        if i == 0:\n"
            "            p: pl.Scalar[pl.INDEX] = pl.yield_(0)\n"
            "        else:\n"
            "            p: pl.Scalar[pl.INDEX] = pl.yield_(acc + i)\n"
            "        r: pl.Scalar[pl.INDEX] = pl.yield_(p)\n"
            "    return r\n");
}

// Carried values and if results are bindings: compared by position, not by name.
TEST(StructuralEqual, LoopCarriesAndIfResultsBindLikeAssignments) {
  Function a("f", {}, {}, {}, CarryingLoop("acc"), FunctionType::Opaque);
  Function b("f", {}, {}, {}, CarryingLoop("total"), FunctionType::Opaque);
  EXPECT_EQ(StructuralDiff(a, b), std::nullopt);
  auto body = FlattenStmts(CarryingLoop("acc"));
  const auto& loop = *body[1]->As<ForStmt>();
  body[1] = std::make_shared<ForStmt>(loop.loop_var(), loop.start(), loop.stop(), loop.step(), loop.body(),
                                      loop.kind());
  Function c("f", {}, {}, {}, std::make_shared<SeqStmts>(body), FunctionType::Opaque);
  EXPECT_EQ(StructuralDiff(a, c), "function 'f': statement 1: loops carry 1 vs 0 values");
}

// `n = 0`, then `while acc < limit: acc = acc + 1` carrying acc (from n) into the result r.
StmtPtr CountingWhile(const std::string& carried_name, int64_t limit = 4) {
  auto index = std::make_shared<ScalarType>(DataType::INDEX);
  auto init = std::make_shared<Var>("n", index);
  auto acc = std::make_shared<Var>(carried_name, index);
  auto next = std::make_shared<Var>("m", index);
  auto result = std::make_shared<Var>("r", index);
  auto zero = std::make_shared<ConstInt>(0, DataType::INDEX), one = std::make_shared<ConstInt>(1, DataType::INDEX);
  auto bound = std::make_shared<ConstInt>(limit, DataType::INDEX);
  auto body = std::make_shared<SeqStmts>(std::vector<StmtPtr>{
      std::make_shared<AssignStmt>(next, *MakeBinary(BinaryOp::Add, acc, one, {})),
      std::make_shared<YieldStmt>(std::vector<ExprPtr>{next})});
  auto loop = std::make_shared<WhileStmt>(*MakeBinary(BinaryOp::Lt, acc, bound, {}), std::vector<IterArg>{{acc, init}},
                                          body, std::vector<VarPtr>{result});
  return std::make_shared<SeqStmts>(std::vector<StmtPtr>{
      std::make_shared<AssignStmt>(init, zero), loop, std::make_shared<ReturnStmt>(std::vector<ExprPtr>{result})});
}

TEST(Printer, WhileLoopWithCarriedValuesPrintsAsPlWhile) {
  Function fn("f", {}, {}, {}, CountingWhile("acc"), FunctionType::Opaque);
  EXPECT_EQ(PrintFunction(fn),
            "@pl.function(type=pl.FunctionType.Opaque)\n"
            "def f(self):\n"
            "    n: pl.Scalar[pl.INDEX] = 0\n"
            "    for (acc,) in pl.while_(init_values=(n,)):\n"
            "        pl.cond(acc < 4)\n"
            "        m: pl.Scalar[pl.INDEX] = acc + 1\n"
            "        r: pl.Scalar[pl.INDEX] = pl.yield_(m)\n"
            "    return r\n");
}

TEST(Printer, WhileLoopWithoutCarriedValuesPrintsAsWhile) {
  auto index = std::make_shared<ScalarType>(DataType::INDEX);
  auto n = std::make_shared<Var>("n", index);
  auto below_four = *MakeBinary(BinaryOp::Lt, n, std::make_shared<ConstInt>(4, DataType::INDEX), {});
  auto loop = std::make_shared<WhileStmt>(below_four, std::vector<IterArg>{},
                                          std::make_shared<SeqStmts>(std::vector<StmtPtr>{}), std::vector<VarPtr>{});
  Function fn("f", {n}, {}, {}, std::make_shared<SeqStmts>(std::vector<StmtPtr>{loop}), FunctionType::Opaque);
  EXPECT_EQ(PrintFunction(fn),
            "@pl.function(type=pl.FunctionType.Opaque)\n"
            "def f(self, n: pl.Scalar[pl.INDEX]):\n"
            "    while n < 4:\n"
            "        pass\n");
}

TEST(StructuralEqual, WhileLoopsBindTheirCarriedValuesAndCompareTheirConditions) {
  Function a("f", {}, {}, {}, CountingWhile("acc"), FunctionType::Opaque);
  Function b("f", {}, {}, {}, CountingWhile("count"), FunctionType::Opaque);
  EXPECT_EQ(StructuralDiff(a, b), std::nullopt);
  Function c("f", {}, {}, {}, CountingWhile("acc", 5), FunctionType::Opaque);
  EXPECT_EQ(StructuralDiff(a, c),
            "function 'f': statement 1: while condition: 4 (pl.Scalar[pl.INDEX]) vs 5 (pl.Scalar[pl.INDEX])");
}

TEST(Printer, StringsPrintAsPythonLiteralsThatReadBack) {
  EXPECT_EQ(PythonStringLiteral(R"(["/a/inc"])"), R"("[\"/a/inc\"]")");
  EXPECT_EQ(PythonStringLiteral("C:\\k\n\x01"), R"("C:\\k\n\x01")");
}

}  // namespace
}  // namespace pypto::ir
