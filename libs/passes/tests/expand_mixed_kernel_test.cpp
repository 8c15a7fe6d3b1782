// ExpandMixedKernel: an InCore kernel doing vector work only becomes AIV, cube work only AIC, and
// both a Group of the same name whose `<name>_aic` and `<name>_aiv` members hand tiles to each other
// over cross-core pipes; a value other than a tile cannot cross, and is refused.
#include <gtest/gtest.h>

#include "kernel_builder.h"
#include "pass_test_util.h"
#include "pypto/ir/printer.h"
#include "pypto/passes/passes.h"
#include "sample_programs.h"

namespace pypto::passes {
namespace {

using namespace ir;
using testing::Ints;
using testing::Op;
using testing::RunOk;

using testing::KernelBuilder;

const VarPtr a = testing::Tensor("a", {64, 64});
const VarPtr c = testing::Tensor("c", {64, 64});

TEST(ExpandMixedKernel, VectorKernelBecomesAiv) {
  auto program = RunOk({OutlineIncoreScopes(), ExpandMixedKernel()}, testing::TileAddProgram());
  EXPECT_EQ(program->Find("tile_add_incore_0")->type(), ir::FunctionType::AIV);
  EXPECT_EQ(program->Find("tile_add")->type(), ir::FunctionType::Orchestration);
}

// A matmul product read by a vector op (which InferTileMemorySpace makes read its move into Vec):
// the product crosses from k_aic to k_aiv through the pipe, and the Group k runs both.
TEST(ExpandMixedKernel, AProductReadByAVectorOpCrossesThroughAPipe) {
  KernelBuilder k;
  auto x = k.Load("x", a, 0, 0, 64, 64, 3);
  auto acc = k.Let("acc", Op("tile.matmul", {x, x}, 4));
  auto y = k.Let("y", Op("tile.exp", {acc}, 5));
  k.Eval(Op("tile.store", {y, Ints({0, 0}), c}, 6));
  auto split = testing::RunPipeline({InferTileMemorySpace(), ExpandMixedKernel()}, k.Program({a, c}, c));
  ASSERT_TRUE(split) << split.error().str();
  EXPECT_EQ(PrintFunction(*(*split)->Find("k_aic")),
            "@pl.function(type=pl.FunctionType.AIC)\n"
            "def k_aic(self, a: pl.Tensor[[64, 64], pl.FP32], c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> "
            "pl.Tensor[[64, 64], pl.FP32]:\n"
            "    x: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [64, 64], "
            "target_memory=pl.Mem.Mat)\n"
            "    x_left: pl.Tile[[64, 64], pl.FP32, pl.Mem.Left] = pl.tile.move(x, target_memory=pl.Mem.Left)\n"
            "    x_right: pl.Tile[[64, 64], pl.FP32, pl.Mem.Right] = pl.tile.move(x, target_memory=pl.Mem.Right)\n"
            "    acc: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(x_left, x_right)\n"
            "    pl.tile.tpush_to_aiv(acc, split=0)\n"
            "    return c\n");
  EXPECT_EQ(PrintFunction(*(*split)->Find("k_aiv")),
            "@pl.function(type=pl.FunctionType.AIV)\n"
            "def k_aiv(self, a: pl.Tensor[[64, 64], pl.FP32], c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> "
            "pl.Tensor[[64, 64], pl.FP32]:\n"
            "    acc_vec: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic([64, 64], dtype=pl.FP32, "
            "split=0)\n"
            "    pl.system.tfree_to_aic(acc_vec, split=0)\n"
            "    y: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.exp(acc_vec)\n"
            "    pl.tile.store(y, [0, 0], c)\n"
            "    return c\n");
  const auto group = (*split)->Find("k");
  EXPECT_EQ(group->type(), FunctionType::Group);
  EXPECT_NE(PrintFunction(*group).find("    self.k_aic(a, c)\n    result: pl.Tensor[[64, 64], pl.FP32] = "
                                       "self.k_aiv(a, c)\n    return result\n"),
            std::string::npos)
      << PrintFunction(*group);
}

}  // namespace
}  // namespace pypto::passes
