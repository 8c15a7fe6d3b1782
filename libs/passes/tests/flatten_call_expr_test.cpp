// FlattenCallExpr on small hand-built IR: the exact printed IR after the pass.
#include <gtest/gtest.h>

#include "pass_test_util.h"
#include "pypto/ir/printer.h"
#include "pypto/passes/passes.h"
#include "pypto/passes/pipeline.h"
#include "sample_programs.h"

namespace pypto::passes {
namespace {

using testing::Ints;
using testing::Op;
using testing::RunOk;

// An SPMD kernel computing its row from its block index inside scalar arithmetic, and loading at
// `[r, 0]` a tile it adds to itself in one nested expression.
ir::ProgramPtr BlockRowKernel() {
  auto x = testing::Tensor("x", {64, 32}), y = testing::Tensor("y", {64, 32});
  auto r_value = testing::Binary(ir::BinaryOp::Add, testing::Index(32),
                                 testing::Binary(ir::BinaryOp::Mul, Op("tile.get_block_idx", {}), testing::Index(16)));
  auto r = testing::Local("r", r_value);
  auto offsets = std::make_shared<ir::TupleLiteral>(std::vector<ir::ExprPtr>{r, testing::Index(0)});
  auto load = Op("tile.load", {x, offsets, Ints({16, 32})});
  auto store = Op("tile.store", {Op("tile.add", {load, load}), offsets, y});
  auto kernel = testing::KernelFunction("k", {x, y}, {ir::ParamDirection::In, ir::ParamDirection::Out},
                                        {testing::Assign(r, r_value), std::make_shared<ir::EvalStmt>(store)}, y);
  return std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{kernel}, "k");
}

TEST(FlattenCallExpr, HoistsCallsOutOfArgumentsAndArithmetic) {
  auto manager = PipelineOf({"FlattenCallExpr"}, {.verify = true});
  ASSERT_TRUE(manager) << manager.error().str();
  auto flat = manager->Run(BlockRowKernel(), PassContext{});
  ASSERT_TRUE(flat) << flat.error().str();
  EXPECT_EQ(ir::PrintProgram(**flat),
            "@pl.program\n"
            "class p:\n"
            "    @pl.function(type=pl.FunctionType.InCore)\n"
            "    def k(self, x: pl.Tensor[[64, 32], pl.FP32], y: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> "
            "pl.Tensor[[64, 32], pl.FP32]:\n"
            "        __tmp_v0: pl.Scalar[pl.INDEX] = pl.tile.get_block_idx()\n"
            "        r: pl.Scalar[pl.INDEX] = 32 + (__tmp_v0 * 16)\n"
            "        __tmp_v1: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [r, 0], [16, 32])\n"
            "        __tmp_v2: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [r, 0], [16, 32])\n"
            "        __tmp_v3: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.add(__tmp_v1, __tmp_v2)\n"
            "        pl.tile.store(__tmp_v3, [r, 0], y)\n"
            "        return y\n");
}

TEST(FlattenCallExpr, NestedCallsBecomeTemporaries) {
  auto a = testing::Tensor("a", {16, 16}), c = testing::Tensor("c", {16, 16});
  auto load = testing::Op("tile.load", {a, testing::Ints({0, 0}), testing::Ints({16, 16})});
  auto twice = testing::Op("tile.add", {load, load});
  auto store = testing::Op("tile.store", {twice, testing::Ints({0, 0}), c});
  auto body = std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{std::make_shared<ir::EvalStmt>(store)});
  auto fn = std::make_shared<ir::Function>("f", std::vector<ir::VarPtr>{a, c}, std::vector<ir::ParamDirection>{},
                                           std::vector<ir::TypePtr>{}, body, ir::FunctionType::Opaque);
  auto program = RunOk({FlattenCallExpr()}, std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{fn}, "f"));
  EXPECT_EQ(ir::PrintFunction(*program->Find("f")),
            "@pl.function(type=pl.FunctionType.Opaque)\n"
            "def f(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Tensor[[16, 16], pl.FP32]):\n"
            "    __tmp_v0: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 16])\n"
            "    __tmp_v1: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 16])\n"
            "    __tmp_v2: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.add(__tmp_v0, __tmp_v1)\n"
            "    pl.tile.store(__tmp_v2, [0, 0], c)\n");
  EXPECT_FALSE(VerifyProperty(IRProperty::NoNestedCalls, ir::Program("p", {fn}, "f")));
}

}  // namespace
}  // namespace pypto::passes
