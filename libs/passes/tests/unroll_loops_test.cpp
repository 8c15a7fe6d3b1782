// UnrollLoops on small hand-built IR: the exact printed IR after the pass, its errors on a loop whose
// bounds are not constants or that runs too many times, and the NoUnrollLoops verifier.
#include <gtest/gtest.h>

#include "pypto/ir/printer.h"
#include "pypto/passes/passes.h"
#include "pypto/passes/pipeline.h"
#include "sample_programs.h"

namespace pypto::passes {
namespace {

using testing::Index;
using testing::Ints;
using testing::Op;

ir::ProgramPtr KernelProgram(std::vector<ir::VarPtr> params, std::vector<ir::StmtPtr> body, const ir::VarPtr& out) {
  std::vector<ir::ParamDirection> directions(params.size(), ir::ParamDirection::In);
  directions.back() = ir::ParamDirection::Out;
  auto kernel = testing::KernelFunction("k", std::move(params), std::move(directions), std::move(body), out);
  return std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{kernel}, "k");
}

// for k in pl.unroll(stop): y[k * 16 : k * 16 + 16] = x[k * 16 : k * 16 + 16] (in [16, 32] tiles)
ir::ProgramPtr CopyRowsKernel(ir::ExprPtr stop) {
  auto x = testing::Tensor("x", {64, 32}), y = testing::Tensor("y", {64, 32});
  auto k = testing::LoopVar("k", 2);
  auto row = testing::Binary(ir::BinaryOp::Mul, k, Index(16));
  auto offsets = std::make_shared<ir::TupleLiteral>(std::vector<ir::ExprPtr>{row, Index(0)});
  auto load = Op("tile.load", {x, offsets, Ints({16, 32})}, 3);
  auto t = testing::Local("t", load);
  auto store = Op("tile.store", {t, offsets, y}, 4);
  auto loop = testing::Loop(k, Index(0), std::move(stop), Index(1),
                            {testing::Assign(t, load), std::make_shared<ir::EvalStmt>(store)}, ir::ForKind::Unroll);
  std::vector<ir::VarPtr> params = {x, y};
  // A stop read from a scalar parameter `n` makes `n` the kernel's first parameter.
  if (auto n = std::dynamic_pointer_cast<const ir::Var>(loop->As<ir::ForStmt>()->stop())) params.insert(params.begin(), n);
  return KernelProgram(params, {loop}, y);
}

ir::Result<ir::ProgramPtr> Unroll(const ir::ProgramPtr& program) {
  auto manager = PipelineOf({"UnrollLoops"}, {.verify = true});
  if (!manager) return pypto::unexpected(manager.error());
  return manager->Run(program, PassContext{});
}

TEST(UnrollLoops, CopiesTheBodyOncePerIterationWithTheLoopVariableFolded) {
  auto unrolled = Unroll(CopyRowsKernel(Index(3)));
  ASSERT_TRUE(unrolled) << unrolled.error().str();
  EXPECT_EQ(ir::PrintProgram(**unrolled),
            "@pl.program\n"
            "class p:\n"
            "    @pl.function(type=pl.FunctionType.InCore)\n"
            "    def k(self, x: pl.Tensor[[64, 32], pl.FP32], y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> "
            "pl.Tensor[[64, 32], pl.FP32]:\n"
            "        t: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 32])\n"
            "        pl.tile.store(t, [0, 0], y)\n"
            "        t_1: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [16, 0], [16, 32])\n"
            "        pl.tile.store(t_1, [16, 0], y)\n"
            "        t_2: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [32, 0], [16, 32])\n"
            "        pl.tile.store(t_2, [32, 0], y)\n"
            "        return y\n");
}

// acc = a; for k in pl.unroll(start, 3): acc = acc + t; y = acc (the loop's result)
ir::ProgramPtr AccumulateKernel(int64_t start) {
  auto x = testing::Tensor("x", {16, 32}), y = testing::Tensor("y", {16, 32});
  auto load = Op("tile.load", {x, Ints({0, 0}), Ints({16, 32})}, 2);
  auto a = testing::Local("a", load);
  auto k = testing::LoopVar("k", 3);
  auto acc = std::make_shared<ir::Var>("acc", a->type());
  auto sum = Op("tile.add", {acc, a}, 4);
  auto next = testing::Local("next", sum);
  auto body = std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{
      testing::Assign(next, sum), std::make_shared<ir::YieldStmt>(std::vector<ir::ExprPtr>{next})});
  auto result = std::make_shared<ir::Var>("result", a->type());
  auto loop = std::make_shared<ir::ForStmt>(k, Index(start), Index(3), Index(1), std::vector<ir::IterArg>{{acc, a}},
                                            body, std::vector<ir::VarPtr>{result}, ir::ForKind::Unroll,
                                            ir::Span{"k.py", 3, 5});
  auto store = Op("tile.store", {result, Ints({0, 0}), y}, 5);
  return KernelProgram({x, y}, {testing::Assign(a, load), loop, std::make_shared<ir::EvalStmt>(store)}, y);
}

TEST(UnrollLoops, PassesCarriedValuesFromCopyToCopyAndTheLastToTheLoopResult) {
  auto unrolled = Unroll(AccumulateKernel(0));
  ASSERT_TRUE(unrolled) << unrolled.error().str();
  EXPECT_EQ(ir::PrintProgram(**unrolled),
            "@pl.program\n"
            "class p:\n"
            "    @pl.function(type=pl.FunctionType.InCore)\n"
            "    def k(self, x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> "
            "pl.Tensor[[16, 32], pl.FP32]:\n"
            "        a: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 32])\n"
            "        next: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.add(a, a)\n"
            "        next_1: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.add(next, a)\n"
            "        next_2: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.add(next_1, a)\n"
            "        pl.tile.store(next_2, [0, 0], y)\n"
            "        return y\n");
}

TEST(UnrollLoops, ALoopOfNoIterationLeavesItsInitialValuesAsItsResults) {
  auto unrolled = Unroll(AccumulateKernel(3));
  ASSERT_TRUE(unrolled) << unrolled.error().str();
  const std::string text = ir::PrintProgram(**unrolled);
  EXPECT_NE(text.find("        pl.tile.store(a, [0, 0], y)\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("tile.add"), std::string::npos) << text;
}

TEST(UnrollLoops, ABodyVariableReadAfterTheLoopIsTheLastCopys) {
  // for k in pl.unroll(2): t = load(x, [k * 16, 0]); then y[0:16] = t (Python reads the last k's t).
  auto x = testing::Tensor("x", {64, 32}), y = testing::Tensor("y", {64, 32});
  auto k = testing::LoopVar("k", 2);
  auto offsets = std::make_shared<ir::TupleLiteral>(
      std::vector<ir::ExprPtr>{testing::Binary(ir::BinaryOp::Mul, k, Index(16)), Index(0)});
  auto load = Op("tile.load", {x, offsets, Ints({16, 32})}, 3);
  auto t = testing::Local("t", load);
  auto loop = testing::Loop(k, Index(0), Index(2), Index(1), {testing::Assign(t, load)}, ir::ForKind::Unroll);
  auto store = Op("tile.store", {t, Ints({0, 0}), y}, 4);
  auto unrolled = Unroll(KernelProgram({x, y}, {loop, std::make_shared<ir::EvalStmt>(store)}, y));
  ASSERT_TRUE(unrolled) << unrolled.error().str();
  const std::string text = ir::PrintProgram(**unrolled);
  EXPECT_NE(text.find("        t_1: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [16, 0], [16, 32])\n"
                      "        pl.tile.store(t_1, [0, 0], y)\n"),
            std::string::npos)
      << text;
}

TEST(UnrollLoops, BoundsThatAreNotConstantsAreAnErrorAtTheLoop) {
  auto n = testing::Scalar("n", ir::DataType::INDEX);
  auto unrolled = Unroll(CopyRowsKernel(n));
  ASSERT_FALSE(unrolled);
  EXPECT_EQ(unrolled.error().str(),
            "k.py:2:5: error: pl.unroll needs constant bounds: the loop over 'k' is copied once per iteration at "
            "compile time\n"
            "  help: use pl.range for a loop whose trip count is known only at run time");
}

TEST(UnrollLoops, ALoopOfMoreThan1024TripsIsAnErrorAtTheLoop) {
  ASSERT_TRUE(Unroll(CopyRowsKernel(Index(1024))));
  auto unrolled = Unroll(CopyRowsKernel(Index(10'000'000)));
  ASSERT_FALSE(unrolled);
  EXPECT_EQ(unrolled.error().str(),
            "k.py:2:5: error: pl.unroll over 'k' runs 10000000 times, more than the 1024 copies a loop may be "
            "unrolled into\n"
            "  help: use pl.range for a long loop, and unroll a short inner one");
}

TEST(UnrollLoops, TheVerifierRejectsAProgramThatStillHasAnUnrollLoop) {
  auto verified = VerifyProperty(IRProperty::NoUnrollLoops, *CopyRowsKernel(Index(2)));
  ASSERT_FALSE(verified);
  EXPECT_EQ(verified.error().message,
            "property NoUnrollLoops does not hold in function 'k': a pl.unroll loop is not unrolled");
  EXPECT_EQ(verified.error().span.line, 2);
}

}  // namespace
}  // namespace pypto::passes
