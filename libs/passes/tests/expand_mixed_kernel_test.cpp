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

// A Vec tile the cube multiplies (which InferTileMemorySpace moves into Mat) crosses the other way:
// k_aiv pushes it, k_aic pops it into Mat and frees the slot, and the Group k, of the kernel's name
// and parameters, runs k_aic and then k_aiv, returning what k_aiv returns.
TEST(ExpandMixedKernel, AVectorTileMultipliedByTheCubeCrossesToTheAicMemberOfTheGroup) {
  KernelBuilder k;
  auto x = k.Load("x", a, 0, 0, 64, 64, 3);
  auto y = k.Let("y", Op("tile.exp", {x}, 4));
  auto acc = k.Let("acc", Op("tile.matmul", {y, y}, 5));
  k.Eval(Op("tile.store", {acc, Ints({0, 0}), c}, 6));
  auto split = testing::RunPipeline({InferTileMemorySpace(), ExpandMixedKernel()}, k.Program({a, c}, c));
  ASSERT_TRUE(split) << split.error().str();
  EXPECT_EQ(PrintProgram(**split),
            "@pl.program\n"
            "class p:\n"
            "    @pl.function(type=pl.FunctionType.AIC)\n"
            "    def k_aic(self, a: pl.Tensor[[64, 64], pl.FP32], c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> "
            "pl.Tensor[[64, 64], pl.FP32]:\n"
            "        y_mat: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.tpop_from_aiv([64, 64], dtype=pl.FP32, "
            "split=0)\n"
            "        pl.system.tfree_to_aiv(y_mat, split=0)\n"
            "        y_mat_left: pl.Tile[[64, 64], pl.FP32, pl.Mem.Left] = pl.tile.move(y_mat, "
            "target_memory=pl.Mem.Left)\n"
            "        y_mat_right: pl.Tile[[64, 64], pl.FP32, pl.Mem.Right] = pl.tile.move(y_mat, "
            "target_memory=pl.Mem.Right)\n"
            "        acc: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(y_mat_left, y_mat_right)\n"
            "        pl.tile.store(acc, [0, 0], c)\n"
            "        return c\n"
            "\n"
            "    @pl.function(type=pl.FunctionType.AIV)\n"
            "    def k_aiv(self, a: pl.Tensor[[64, 64], pl.FP32], c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> "
            "pl.Tensor[[64, 64], pl.FP32]:\n"
            "        x: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [64, 64])\n"
            "        y: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.exp(x)\n"
            "        pl.tile.tpush_to_aic(y, split=0)\n"
            "        return c\n"
            "\n"
            "    @pl.function(type=pl.FunctionType.Group)\n"
            "    def k(self, a: pl.Tensor[[64, 64], pl.FP32], c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> "
            "pl.Tensor[[64, 64], pl.FP32]:\n"
            "        self.k_aic(a, c)\n"
            "        result: pl.Tensor[[64, 64], pl.FP32] = self.k_aiv(a, c)\n"
            "        return result\n");
}

// `first = pl.read(counts, [0, 0])` of a Vec tile, then `a[first : first + 16, :]` multiplied by the
// cube: the cube part would need a scalar only the vector part computes, and only tiles cross.
TEST(ExpandMixedKernel, AScalarReadFromATileOfTheOtherCoreIsRefused) {
  const VarPtr n = testing::Tensor("n", {16, 16}, DataType::INT32);
  const VarPtr o = testing::Tensor("o", {16, 64});
  KernelBuilder k;
  auto counts = k.Load("counts", n, 0, 0, 16, 16, 3);
  auto first = k.Let("first", Op("tile.read", {counts, Ints({0, 0})}, 4));
  auto offsets = std::make_shared<TupleLiteral>(std::vector<ExprPtr>{first, testing::Index(0)});
  auto rows = k.Let("rows", Op("tile.load", {a, offsets, Ints({16, 64})}, 5));
  auto whole = k.Load("whole", a, 0, 0, 64, 64, 6);
  auto acc = k.Let("acc", Op("tile.matmul", {rows, whole}, 7));
  k.Eval(Op("tile.store", {acc, Ints({0, 0}), o}, 8));
  auto result = testing::RunPipeline({InferTileMemorySpace(), ExpandMixedKernel()}, k.Program({a, n, o}, o));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().str(),
            "k.py:5:9: error: kernel 'k' mixes cube and vector work, and its cube part reads 'first', which only "
            "the vector part computes; only tiles can cross between the two\n"
            "  help: compute the value from tensors both parts read, or split the work into two pl.at scopes");
}

}  // namespace
}  // namespace pypto::passes
