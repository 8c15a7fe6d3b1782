#include <gtest/gtest.h>

#include "pypto/ir/printer.h"
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

}  // namespace
}  // namespace pypto::ir
