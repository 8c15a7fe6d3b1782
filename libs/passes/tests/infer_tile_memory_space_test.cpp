// InferTileMemorySpace on hand-built kernels: the printed kernel before and after, programs that
// place their tiles explicitly (left as they are), and the errors with their locations.
#include <gtest/gtest.h>

#include "kernel_builder.h"
#include "pass_test_util.h"
#include "pypto/ir/printer.h"
#include "pypto/ir/structural_equal.h"
#include "pypto/passes/passes.h"
#include "pypto/passes/pipeline.h"
#include "sample_programs.h"

namespace pypto::passes {
namespace {

using namespace ir;
using testing::Assign;
using testing::Ints;
using testing::Local;
using testing::Op;
using testing::OpWithKwargs;

using testing::KernelBuilder;

std::string Kernel(const ProgramPtr& program) { return PrintFunction(*program->Find("k")); }

Result<ProgramPtr> Place(const ProgramPtr& program) { return testing::RunPipeline({InferTileMemorySpace()}, program); }

const VarPtr a = testing::Tensor("a", {64, 64});
const VarPtr b = testing::Tensor("b", {64, 64});
const VarPtr c = testing::Tensor("c", {64, 64});

// gemm.py's kernel body: acc = a[:, 0:32] @ b[0:32, :]; acc += a[:, 32:64] @ b[32:64, :]; c = acc.
ProgramPtr GemmProgram() {
  KernelBuilder k;
  auto tile_a = k.Load("tile_a", a, 0, 0, 64, 32, 3);
  auto tile_b = k.Load("tile_b", b, 0, 0, 32, 64, 4);
  auto acc = k.Let("acc", Op("tile.matmul", {tile_a, tile_b}, 5));
  auto next_a = k.Load("next_a", a, 0, 32, 64, 32, 6);
  auto next_b = k.Load("next_b", b, 32, 0, 32, 64, 6);
  auto sum = k.Let("acc_1", Op("tile.matmul_acc", {acc, next_a, next_b}, 6));
  k.Eval(Op("tile.store", {sum, Ints({0, 0}), c}, 7));
  return k.Program({a, b, c}, c);
}

constexpr const char* kSignature =
    "@pl.function(type=pl.FunctionType.InCore)\n"
    "def k(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32], "
    "c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:\n";

TEST(InferTileMemorySpace, GemmOperandsAreLoadedIntoMatAndMovedIntoL0) {
  auto program = GemmProgram();
  EXPECT_EQ(Kernel(program),
            std::string(kSignature) +
                "    tile_a: pl.Tile[[64, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [64, 32])\n"
                "    tile_b: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [0, 0], [32, 64])\n"
                "    acc: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(tile_a, tile_b)\n"
                "    next_a: pl.Tile[[64, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 32], [64, 32])\n"
                "    next_b: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [32, 0], [32, 64])\n"
                "    acc_1: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(acc, next_a, next_b)\n"
                "    pl.tile.store(acc_1, [0, 0], c)\n"
                "    return c\n");
  auto placed = Place(program);
  ASSERT_TRUE(placed) << placed.error().str();
  EXPECT_EQ(Kernel(*placed),
            std::string(kSignature) +
                "    tile_a: pl.Tile[[64, 32], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [64, 32], "
                "target_memory=pl.Mem.Mat)\n"
                "    tile_b: pl.Tile[[32, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [32, 64], "
                "target_memory=pl.Mem.Mat)\n"
                "    tile_a_left: pl.Tile[[64, 32], pl.FP32, pl.Mem.Left] = pl.tile.move(tile_a, "
                "target_memory=pl.Mem.Left)\n"
                "    tile_b_right: pl.Tile[[32, 64], pl.FP32, pl.Mem.Right] = pl.tile.move(tile_b, "
                "target_memory=pl.Mem.Right)\n"
                "    acc: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(tile_a_left, tile_b_right)\n"
                "    next_a: pl.Tile[[64, 32], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [0, 32], [64, 32], "
                "target_memory=pl.Mem.Mat)\n"
                "    next_b: pl.Tile[[32, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(b, [32, 0], [32, 64], "
                "target_memory=pl.Mem.Mat)\n"
                "    next_a_left: pl.Tile[[64, 32], pl.FP32, pl.Mem.Left] = pl.tile.move(next_a, "
                "target_memory=pl.Mem.Left)\n"
                "    next_b_right: pl.Tile[[32, 64], pl.FP32, pl.Mem.Right] = pl.tile.move(next_b, "
                "target_memory=pl.Mem.Right)\n"
                "    acc_1: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(acc, next_a_left, "
                "next_b_right)\n"
                "    pl.tile.store(acc_1, [0, 0], c)\n"
                "    return c\n");
}

TEST(InferTileMemorySpace, PlacedGemmLowersToACubeKernel) {
  auto lowered = testing::RunPipeline({InferTileMemorySpace(), ExpandMixedKernel(), AllocateMemoryAddr()},
                                      GemmProgram());
  ASSERT_TRUE(lowered) << lowered.error().str();
  EXPECT_EQ((*lowered)->Find("k")->type(), FunctionType::AIC);
}

// One tile read twice by matmuls in one block is moved once; a block inside a loop reuses it.
TEST(InferTileMemorySpace, OneMovePerTileAndBufferReachesInnerBlocks) {
  KernelBuilder k;
  auto x = k.Load("x", a, 0, 0, 64, 64, 3);
  auto acc = k.Let("acc", Op("tile.matmul", {x, x}, 4));
  KernelBuilder loop;
  auto again = loop.Let("again", Op("tile.matmul_acc", {acc, x, x}, 6));
  loop.Eval(Op("tile.store", {again, Ints({0, 0}), c}, 7));
  auto i = testing::LoopVar("i", 5);
  k.body.push_back(testing::Loop(i, testing::Index(0), testing::Index(2), testing::Index(1), loop.body));
  auto placed = Place(k.Program({a, c}, c));
  ASSERT_TRUE(placed) << placed.error().str();
  EXPECT_EQ(Kernel(*placed),
            "@pl.function(type=pl.FunctionType.InCore)\n"
            "def k(self, a: pl.Tensor[[64, 64], pl.FP32], c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> "
            "pl.Tensor[[64, 64], pl.FP32]:\n"
            "    x: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [64, 64], "
            "target_memory=pl.Mem.Mat)\n"
            "    x_left: pl.Tile[[64, 64], pl.FP32, pl.Mem.Left] = pl.tile.move(x, target_memory=pl.Mem.Left)\n"
            "    x_right: pl.Tile[[64, 64], pl.FP32, pl.Mem.Right] = pl.tile.move(x, "
            "target_memory=pl.Mem.Right)\n"
            "    acc: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(x_left, x_right)\n"
            "    for i in pl.range(2):\n"
            "        again: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(acc, x_left, x_right)\n"
            "        pl.tile.store(again, [0, 0], c)\n"
            "    return c\n");
}

// A tile read by a vector op and by a matmul is loaded once per side: Vec for the vector op, a Mat
// twin for the cube. ExpandMixedKernel then gives each side's loads to that side's member.
TEST(InferTileMemorySpace, TileReadByBothSidesIsLoadedOncePerSide) {
  KernelBuilder k;
  auto x = k.Load("x", a, 0, 0, 64, 64, 3);
  auto y = k.Let("y", Op("tile.exp", {x}, 4));
  k.Eval(Op("tile.store", {y, Ints({0, 0}), b}, 5));
  auto acc = k.Let("acc", Op("tile.matmul", {x, x}, 6));
  k.Eval(Op("tile.store", {acc, Ints({0, 0}), c}, 7));
  auto placed = Place(k.Program({a, b, c}, c));
  ASSERT_TRUE(placed) << placed.error().str();
  const std::string text = Kernel(*placed);
  const std::string expected_prefix =
      "    x: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [64, 64])\n"
      "    x_mat: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [64, 64], "
      "target_memory=pl.Mem.Mat)\n"
      "    y: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.exp(x)\n"
      "    pl.tile.store(y, [0, 0], b)\n"
      "    x_mat_left: pl.Tile[[64, 64], pl.FP32, pl.Mem.Left] = pl.tile.move(x_mat, target_memory=pl.Mem.Left)\n"
      "    x_mat_right: pl.Tile[[64, 64], pl.FP32, pl.Mem.Right] = pl.tile.move(x_mat, "
      "target_memory=pl.Mem.Right)\n"
      "    acc: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(x_mat_left, x_mat_right)\n";
  EXPECT_NE(text.find(expected_prefix), std::string::npos) << text;

  auto split = testing::RunPipeline({InferTileMemorySpace(), ExpandMixedKernel()}, k.Program({a, b, c}, c));
  ASSERT_TRUE(split) << split.error().str();
  const std::string aic = PrintFunction(*(*split)->Find("k_aic")), aiv = PrintFunction(*(*split)->Find("k_aiv"));
  EXPECT_NE(aic.find("x_mat: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.load("), std::string::npos) << aic;
  EXPECT_EQ(aic.find("pl.tile.exp"), std::string::npos) << aic;
  EXPECT_NE(aiv.find("y: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.exp(x)"), std::string::npos) << aiv;
  EXPECT_EQ(aiv.find("matmul"), std::string::npos) << aiv;
  EXPECT_EQ((*split)->Find("k")->type(), FunctionType::Group);
}

// pl.load(..., target_memory=pl.Mem.Mat) + pl.move: nothing to do, the very same program comes back.
TEST(InferTileMemorySpace, ExplicitlyPlacedProgramIsUnchanged) {
  KernelBuilder k;
  auto x = k.Load("x", a, 0, 0, 64, 64, 3, MemorySpace::Mat);
  auto left = k.Let("left", OpWithKwargs("tile.move", {x}, {{"target_memory", MemorySpace::Left}}, 4));
  auto right = k.Let("right", OpWithKwargs("tile.move", {x}, {{"target_memory", MemorySpace::Right}}, 4));
  auto acc = k.Let("acc", Op("tile.matmul", {left, right}, 5));
  k.Eval(Op("tile.store", {acc, Ints({0, 0}), c}, 6));
  auto program = k.Program({a, c}, c);
  auto placed = Place(program);
  ASSERT_TRUE(placed) << placed.error().str();
  EXPECT_EQ(Kernel(*placed), Kernel(program));
  EXPECT_TRUE(StructuralEqual(**placed, *program));
}

// An explicit Mat load keeps its placement; the matmul only gets its moves.
TEST(InferTileMemorySpace, ExplicitMatOperandOnlyGetsItsMove) {
  KernelBuilder k;
  auto x = k.Load("x", a, 0, 0, 64, 64, 3, MemorySpace::Mat);
  auto left = k.Let("left", OpWithKwargs("tile.move", {x}, {{"target_memory", MemorySpace::Left}}, 4));
  auto acc = k.Let("acc", Op("tile.matmul", {left, x}, 5));
  k.Eval(Op("tile.store", {acc, Ints({0, 0}), c}, 6));
  auto placed = Place(k.Program({a, c}, c));
  ASSERT_TRUE(placed) << placed.error().str();
  const std::string text = Kernel(*placed);
  EXPECT_NE(text.find("    x_right: pl.Tile[[64, 64], pl.FP32, pl.Mem.Right] = pl.tile.move(x, "
                      "target_memory=pl.Mem.Right)\n"
                      "    acc: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(left, x_right)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("pl.tile.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat)\n"), std::string::npos);
}

// `acc = pl.create_tensor(...)` rebound before any use: the placeholder goes away.
TEST(InferTileMemorySpace, UnusedCreatedTensorIsDropped) {
  KernelBuilder k;
  k.Let("acc", OpWithKwargs("tensor.create", {Ints({64, 64})}, {{"dtype", DataType::FP32}}, 3));
  auto x = k.Load("x", a, 0, 0, 64, 64, 4);
  k.Eval(Op("tile.store", {x, Ints({0, 0}), c}, 5));
  auto placed = Place(k.Program({a, c}, c));
  ASSERT_TRUE(placed) << placed.error().str();
  EXPECT_EQ(Kernel(*placed).find("create"), std::string::npos) << Kernel(*placed);
}

TEST(InferTileMemorySpace, UsedCreatedTensorIsAnError) {
  KernelBuilder k;
  auto t = k.Let("t", OpWithKwargs("tensor.create", {Ints({64, 64})}, {{"dtype", DataType::FP32}}, 3));
  auto x = k.Load("x", t, 0, 0, 64, 64, 4);
  k.Eval(Op("tile.store", {x, Ints({0, 0}), c}, 5));
  auto placed = Place(k.Program({a, c}, c));
  ASSERT_FALSE(placed);
  EXPECT_EQ(placed.error().str(),
            "k.py:3:9: error: 't' is a tensor created inside a kernel and then used; a kernel computes on tiles\n"
            "  help: use pl.create_tile(shape, dtype=...) for scratch space, or create the tensor outside the pl.at "
            "scope and pass it in");
}

// A matmul result feeding a vector op in the same kernel (cube -> vector) reaches it through a
// move into Vec, which ExpandMixedKernel turns into a cross-core pipe.
TEST(InferTileMemorySpace, VectorOpOnMatmulResultReadsItsMoveIntoVec) {
  KernelBuilder k;
  auto x = k.Load("x", a, 0, 0, 64, 64, 3);
  auto acc = k.Let("acc", Op("tile.matmul", {x, x}, 4));
  auto y = k.Let("y", Op("tile.exp", {acc}, 5));
  k.Eval(Op("tile.store", {y, Ints({0, 0}), c}, 6));
  auto placed = Place(k.Program({a, c}, c));
  ASSERT_TRUE(placed) << placed.error().str();
  const std::string text = Kernel(*placed);
  EXPECT_NE(text.find("    acc_vec: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.move(acc, "
                      "target_memory=pl.Mem.Vec)\n"
                      "    y: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.exp(acc_vec)\n"),
            std::string::npos)
      << text;
}

// A product cast for vector ops is cast on the vector core, as upstream's tile.cast (a vector op)
// is: the product crosses as it is and no converted copy of it takes L0C bytes.
TEST(InferTileMemorySpace, CastOfAProductReadByVectorOpsRunsOnTheVectorCore) {
  KernelBuilder k;
  auto x = k.Load("x", a, 0, 0, 64, 64, 3);
  auto acc = k.Let("acc", Op("tile.matmul", {x, x}, 4));
  auto half = k.Let("half", OpWithKwargs("tile.cast", {acc}, {{"target_type", DataType::BF16},
                                                              {"mode", std::string("round")}}, 5));
  auto y = k.Let("y", Op("tile.exp", {half}, 6));
  const VarPtr out = testing::Tensor("out", {64, 64}, DataType::BF16);
  k.Eval(Op("tile.store", {y, Ints({0, 0}), out}, 7));
  auto placed = Place(k.Program({a, out}, out));
  ASSERT_TRUE(placed) << placed.error().str();
  const std::string text = Kernel(*placed);
  EXPECT_NE(text.find("    acc_vec: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.tile.move(acc, "
                      "target_memory=pl.Mem.Vec)\n"
                      "    half: pl.Tile[[64, 64], pl.BF16, pl.Mem.Vec] = pl.tile.cast(acc_vec, target_type=pl.BF16, "
                      "mode=\"round\")\n"),
            std::string::npos)
      << text;
}

TEST(InferTileMemorySpace, VectorOpOnAMatTileIsAnErrorAtTheOp) {
  KernelBuilder k;
  auto x = k.Load("x", a, 0, 0, 64, 64, 3, MemorySpace::Mat);
  auto y = k.Let("y", Op("tile.exp", {x}, 4));
  auto acc = k.Let("acc", Op("tile.matmul", {y, y}, 5));
  k.Eval(Op("tile.store", {acc, Ints({0, 0}), c}, 6));
  auto placed = Place(k.Program({a, c}, c));
  ASSERT_FALSE(placed);
  EXPECT_EQ(placed.error().str(),
            "k.py:4:9: error: tile.exp runs on the vector core but reads 'x' from Mat, the result of tile.load; "
            "only Vec and Acc tiles reach vector ops\n"
            "  help: load the tile without target_memory, or pl.move it into Vec");
}

// A Vec tile multiplied by the cube crosses into Mat first, then moves into L0.
TEST(InferTileMemorySpace, ExplicitVecOperandMovesIntoMatThenL0) {
  KernelBuilder k;
  auto x = k.Load("x", a, 0, 0, 64, 64, 3, MemorySpace::Vec);
  auto acc = k.Let("acc", Op("tile.matmul", {x, x}, 4));
  k.Eval(Op("tile.store", {acc, Ints({0, 0}), c}, 5));
  auto placed = Place(k.Program({a, c}, c));
  ASSERT_TRUE(placed) << placed.error().str();
  const std::string text = Kernel(*placed);
  EXPECT_NE(text.find("    x_mat: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.tile.move(x, target_memory=pl.Mem.Mat)\n"
                      "    x_mat_left: pl.Tile[[64, 64], pl.FP32, pl.Mem.Left] = pl.tile.move(x_mat, "
                      "target_memory=pl.Mem.Left)\n"),
            std::string::npos)
      << text;
}

// Without the pass, a matmul still reading a Vec tile fails ExpandMixedKernel's requirement.
TEST(InferTileMemorySpace, VerifierRejectsUnplacedOperands) {
  auto result = testing::RunPipeline({ExpandMixedKernel()}, GemmProgram());
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message,
            "pass ExpandMixedKernel requires TileMemoryInferred: property TileMemoryInferred does not hold in "
            "function 'k': tile.matmul reads pl.Tile[[64, 32], pl.FP32, pl.Mem.Vec] where the cube reads Left");
  EXPECT_EQ(result.error().span.str(), "k.py:5:9");
}

}  // namespace
}  // namespace pypto::passes
