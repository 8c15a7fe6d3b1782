// FlattenTileNdTo2D on kernels with a matmul over a batch: each is unrolled into one 2-D matmul per
// batch (batch_matmul_expansion.h), a broadcast operand read whole by every one, a b_trans operand
// loaded per batch like any other, a matmul_acc chain per batch; the printed kernel after the pass,
// the TileOps2D verifier, and the kernels left as they are.
#include <gtest/gtest.h>

#include "flatten_tile_nd_to_2d.h"
#include "kernel_builder.h"
#include "pass_test_util.h"
#include "pypto/ir/printer.h"
#include "pypto/passes/ir_property.h"
#include "pypto/passes/passes.h"
#include "sample_programs.h"

namespace pypto::passes {
namespace {

using namespace ir;
using testing::Ints;
using testing::KernelBuilder;
using testing::Op;
using testing::OpWithKwargs;

std::string Kernel(const ProgramPtr& program) { return PrintFunction(*program->Find("k")); }

Result<ProgramPtr> Flatten(const ProgramPtr& program) { return testing::RunPipeline({FlattenTileNdTo2D()}, program); }

// The flattened program, which TileOps2D must accept.
ProgramPtr FlattenOk(const ProgramPtr& program) {
  auto flat = Flatten(program);
  EXPECT_TRUE(flat) << flat.error().str();
  if (!flat) return nullptr;
  auto verified = VerifyProperty(IRProperty::TileOps2D, **flat);
  EXPECT_TRUE(verified) << verified.error().str();
  return *flat;
}

// c = a @ b for a [2, 16, 32] batch a and b of shape `b_shape`, loaded whole.
ProgramPtr BatchMatmul(Shape b_shape, Call::Kwargs kwargs = {}) {
  Shape c_shape = {2, 16, b_shape[b_shape.size() - (kwargs.empty() ? 1 : 2)]};
  auto a = testing::Tensor("a", {2, 16, 32}), b = testing::Tensor("b", b_shape), c = testing::Tensor("c", c_shape);
  KernelBuilder k;
  auto b_origin = std::make_shared<TupleLiteral>(std::vector<ExprPtr>(b_shape.size(), testing::Index(0)));
  auto b_window = std::make_shared<TupleLiteral>([&] {
    std::vector<ExprPtr> extents;
    for (int64_t extent : b_shape) extents.push_back(testing::Index(extent));
    return extents;
  }());
  auto ta = k.Let("ta", Op("tile.load", {a, Ints({0, 0, 0}), Ints({2, 16, 32})}, 3));
  auto tb = k.Let("tb", Op("tile.load", {b, b_origin, b_window}, 4));
  auto tc = k.Let("tc", OpWithKwargs("tile.matmul", {ta, tb}, kwargs, 5));
  k.Eval(Op("tile.store", {tc, Ints({0, 0, 0}), c}, 6));
  return k.Program({a, b, c}, c);
}

TEST(FlattenBatchMatmul, EachBatchIsLoadedMultipliedAndStoredAsA2DMatmul) {
  auto flat = FlattenOk(BatchMatmul({2, 32, 16}));
  ASSERT_TRUE(flat);
  EXPECT_EQ(Kernel(flat),
            "@pl.function(type=pl.FunctionType.InCore)\n"
            "def k(self, a: pl.Tensor[[2, 16, 32], pl.FP32], b: pl.Tensor[[2, 32, 16], pl.FP32], "
            "c: pl.Out[pl.Tensor[[2, 16, 16], pl.FP32]]) -> pl.Tensor[[2, 16, 16], pl.FP32]:\n"
            "    ta_b0: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0, 0], [1, 16, 32])\n"
            "    tb_b0: pl.Tile[[32, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [0, 0, 0], [1, 32, 16])\n"
            "    tc_b0: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(ta_b0, tb_b0)\n"
            "    pl.tile.store(tc_b0, [0, 0, 0], c)\n"
            "    ta_b1: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [1, 0, 0], [1, 16, 32])\n"
            "    tb_b1: pl.Tile[[32, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [1, 0, 0], [1, 32, 16])\n"
            "    tc_b1: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(ta_b1, tb_b1)\n"
            "    pl.tile.store(tc_b1, [1, 0, 0], c)\n"
            "    return c\n");
}

TEST(FlattenBatchMatmul, A2DRhsIsOneMatrixReadByEveryBatch) {
  auto flat = FlattenOk(BatchMatmul({32, 16}));
  ASSERT_TRUE(flat);
  EXPECT_EQ(Kernel(flat),
            "@pl.function(type=pl.FunctionType.InCore)\n"
            "def k(self, a: pl.Tensor[[2, 16, 32], pl.FP32], b: pl.Tensor[[32, 16], pl.FP32], "
            "c: pl.Out[pl.Tensor[[2, 16, 16], pl.FP32]]) -> pl.Tensor[[2, 16, 16], pl.FP32]:\n"
            "    tb: pl.Tile[[32, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [0, 0], [32, 16])\n"
            "    ta_b0: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0, 0], [1, 16, 32])\n"
            "    tc_b0: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(ta_b0, tb)\n"
            "    pl.tile.store(tc_b0, [0, 0, 0], c)\n"
            "    ta_b1: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [1, 0, 0], [1, 16, 32])\n"
            "    tc_b1: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(ta_b1, tb)\n"
            "    pl.tile.store(tc_b1, [1, 0, 0], c)\n"
            "    return c\n");
}

TEST(FlattenBatchMatmul, ABatchOf1RhsIsOneMatrixReadByEveryBatch) {
  auto flat = FlattenOk(BatchMatmul({1, 32, 16}));
  ASSERT_TRUE(flat);
  const std::string text = Kernel(flat);
  EXPECT_NE(text.find("    tb: pl.Tile[[32, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [0, 0, 0], [1, 32, 16])\n"
                      "    ta_b0: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0, 0], [1, 16, 32])\n"
                      "    tc_b0: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(ta_b0, tb)\n"),
            std::string::npos)
      << text;
}

TEST(FlattenBatchMatmul, ATransposedRhsIsLoadedPerBatchAndKeepsBTrans) {
  auto flat = FlattenOk(BatchMatmul({2, 16, 32}, {{"b_trans", true}}));
  ASSERT_TRUE(flat);
  EXPECT_EQ(Kernel(flat),
            "@pl.function(type=pl.FunctionType.InCore)\n"
            "def k(self, a: pl.Tensor[[2, 16, 32], pl.FP32], b: pl.Tensor[[2, 16, 32], pl.FP32], "
            "c: pl.Out[pl.Tensor[[2, 16, 16], pl.FP32]]) -> pl.Tensor[[2, 16, 16], pl.FP32]:\n"
            "    ta_b0: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0, 0], [1, 16, 32])\n"
            "    tb_b0: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [0, 0, 0], [1, 16, 32])\n"
            "    tc_b0: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(ta_b0, tb_b0, b_trans=True)\n"
            "    pl.tile.store(tc_b0, [0, 0, 0], c)\n"
            "    ta_b1: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [1, 0, 0], [1, 16, 32])\n"
            "    tb_b1: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [1, 0, 0], [1, 16, 32])\n"
            "    tc_b1: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(ta_b1, tb_b1, b_trans=True)\n"
            "    pl.tile.store(tc_b1, [1, 0, 0], c)\n"
            "    return c\n");
}

// K split in two: acc = a[..., :16] @ b[:, :16, :], then acc += a[..., 16:] @ b[:, 16:, :], over a batch
// of 2 at tensor rows [i, i + 2) where i is a kernel parameter; the result bound and returned.
TEST(FlattenBatchMatmul, AMatmulAccChainAccumulatesEachBatchInItsOwnProduct) {
  auto a = testing::Tensor("a", {4, 16, 32}), b = testing::Tensor("b", {4, 32, 16});
  auto c = testing::Tensor("c", {4, 16, 16});
  auto i = testing::Scalar("i", DataType::INDEX);
  auto at = [&](int64_t row, int64_t col) {
    return std::make_shared<TupleLiteral>(std::vector<ExprPtr>{i, testing::Index(row), testing::Index(col)});
  };
  KernelBuilder k;
  auto a0 = k.Let("a0", Op("tile.load", {a, at(0, 0), Ints({2, 16, 16})}, 3));
  auto b0 = k.Let("b0", Op("tile.load", {b, at(0, 0), Ints({2, 16, 16})}, 4));
  auto acc = k.Let("acc", Op("tile.matmul", {a0, b0}, 5));
  auto a1 = k.Let("a1", Op("tile.load", {a, at(0, 16), Ints({2, 16, 16})}, 6));
  auto b1 = k.Let("b1", Op("tile.load", {b, at(16, 0), Ints({2, 16, 16})}, 7));
  auto sum = k.Let("sum", Op("tile.matmul_acc", {acc, a1, b1}, 8));
  auto out = k.Let("out", Op("tile.store", {sum, at(0, 0), c}, 9));
  auto flat = FlattenOk(k.Program({a, b, i, c}, out));
  ASSERT_TRUE(flat);
  EXPECT_EQ(Kernel(flat),
            "@pl.function(type=pl.FunctionType.InCore)\n"
            "def k(self, a: pl.Tensor[[4, 16, 32], pl.FP32], b: pl.Tensor[[4, 32, 16], pl.FP32], "
            "i: pl.Scalar[pl.INDEX], c: pl.Out[pl.Tensor[[4, 16, 16], pl.FP32]]) -> pl.Tensor[[4, 16, 16], pl.FP32]:\n"
            "    a0_b0: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [i, 0, 0], [1, 16, 16])\n"
            "    b0_b0: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [i, 0, 0], [1, 16, 16])\n"
            "    acc_b0: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(a0_b0, b0_b0)\n"
            "    a0_b1: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [i + 1, 0, 0], [1, 16, 16])\n"
            "    b0_b1: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [i + 1, 0, 0], [1, 16, 16])\n"
            "    acc_b1: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(a0_b1, b0_b1)\n"
            "    a1_b0: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [i, 0, 16], [1, 16, 16])\n"
            "    b1_b0: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [i, 16, 0], [1, 16, 16])\n"
            "    sum_b0: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(acc_b0, a1_b0, b1_b0)\n"
            "    pl.tile.store(sum_b0, [i, 0, 0], c)\n"
            "    a1_b1: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [i + 1, 0, 16], [1, 16, 16])\n"
            "    b1_b1: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [i + 1, 16, 0], [1, 16, 16])\n"
            "    sum_b1: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(acc_b1, a1_b1, b1_b1)\n"
            "    out: pl.Tensor[[4, 16, 16], pl.FP32] = pl.tile.store(sum_b1, [i + 1, 0, 0], c)\n"
            "    return out\n");
}

// A load read both by the matmul and by a vector op stays whole for the vector op.
TEST(FlattenBatchMatmul, ALoadAlsoReadByAVectorOpIsKeptBesideItsPerBatchLoads) {
  auto a = testing::Tensor("a", {2, 16, 32}), b = testing::Tensor("b", {2, 32, 16});
  auto c = testing::Tensor("c", {2, 16, 16}), e = testing::Tensor("e", {2, 16, 32});
  KernelBuilder k;
  auto ta = k.Let("ta", Op("tile.load", {a, Ints({0, 0, 0}), Ints({2, 16, 32})}, 3));
  auto tb = k.Let("tb", Op("tile.load", {b, Ints({0, 0, 0}), Ints({2, 32, 16})}, 4));
  auto tc = k.Let("tc", Op("tile.matmul", {ta, tb}, 5));
  k.Eval(Op("tile.store", {tc, Ints({0, 0, 0}), c}, 6));
  auto te = k.Let("te", Op("tile.exp", {ta}, 7));
  k.Eval(Op("tile.store", {te, Ints({0, 0, 0}), e}, 8));
  auto flat = FlattenOk(k.Program({a, b, e, c}, c));
  ASSERT_TRUE(flat);
  const std::string text = Kernel(flat);
  EXPECT_NE(text.find("    ta: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0, 0], [2, 16, 32])\n"
                      "    ta_b0: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0, 0], [1, 16, 32])\n"
                      "    ta_b1: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [1, 0, 0], [1, 16, 32])\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    te: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.exp(ta)\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("tb:"), std::string::npos) << text;
}

TEST(FlattenBatchMatmul, ExpandingTwiceChangesNothing) {
  auto once = FlattenOk(BatchMatmul({2, 32, 16}));
  ASSERT_TRUE(once);
  auto twice = FlattenOk(once);
  ASSERT_TRUE(twice);
  EXPECT_EQ(twice->Find("k"), once->Find("k"));
}

// An operand computed by a vector op has no load to make per batch: each batch reads its rows of the
// merged tile through a tile.slice.
TEST(FlattenBatchMatmul, AnOperandComputedInTheKernelIsSlicedPerBatch) {
  auto a = testing::Tensor("a", {2, 16, 32}), b = testing::Tensor("b", {2, 32, 16});
  auto c = testing::Tensor("c", {2, 16, 16});
  KernelBuilder k;
  auto ta = k.Let("ta", Op("tile.load", {a, Ints({0, 0, 0}), Ints({2, 16, 32})}, 3));
  auto tb = k.Let("tb", Op("tile.load", {b, Ints({0, 0, 0}), Ints({2, 32, 16})}, 4));
  auto ea = k.Let("ea", Op("tile.exp", {ta}, 5));
  auto tc = k.Let("tc", Op("tile.matmul", {ea, tb}, 6));
  k.Eval(Op("tile.store", {tc, Ints({0, 0, 0}), c}, 7));
  auto flat = FlattenOk(k.Program({a, b, c}, c));
  ASSERT_TRUE(flat);
  EXPECT_EQ(Kernel(flat),
            "@pl.function(type=pl.FunctionType.InCore)\n"
            "def k(self, a: pl.Tensor[[2, 16, 32], pl.FP32], b: pl.Tensor[[2, 32, 16], pl.FP32], "
            "c: pl.Out[pl.Tensor[[2, 16, 16], pl.FP32]]) -> pl.Tensor[[2, 16, 16], pl.FP32]:\n"
            "    ta: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0, 0], [2, 16, 32])\n"
            "    ea: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.exp(ta)\n"
            "    ea_b0: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.slice(ea, [16, 32], [0, 0])\n"
            "    tb_b0: pl.Tile[[32, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [0, 0, 0], [1, 32, 16])\n"
            "    tc_b0: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(ea_b0, tb_b0)\n"
            "    pl.tile.store(tc_b0, [0, 0, 0], c)\n"
            "    ea_b1: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.slice(ea, [16, 32], [16, 0])\n"
            "    tb_b1: pl.Tile[[32, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [1, 0, 0], [1, 32, 16])\n"
            "    tc_b1: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(ea_b1, tb_b1)\n"
            "    pl.tile.store(tc_b1, [1, 0, 0], c)\n"
            "    return c\n");
}

// A K loop accumulating into a batched product carries one accumulator per batch.
TEST(FlattenBatchMatmul, ALoopCarryingABatchedAccumulatorCarriesOnePerBatch) {
  auto a = testing::Tensor("a", {2, 16, 64}), b = testing::Tensor("b", {2, 64, 16});
  auto c = testing::Tensor("c", {2, 16, 16});
  KernelBuilder k;
  auto a0 = k.Let("a0", Op("tile.load", {a, Ints({0, 0, 0}), Ints({2, 16, 32})}, 3));
  auto b0 = k.Let("b0", Op("tile.load", {b, Ints({0, 0, 0}), Ints({2, 32, 16})}, 4));
  auto init = k.Let("init", Op("tile.matmul", {a0, b0}, 5));
  auto i = testing::LoopVar("i", 6);
  auto acc = std::make_shared<Var>("acc", init->type());
  KernelBuilder body;
  auto a1 = body.Let("a1", Op("tile.load", {a, Ints({0, 0, 32}), Ints({2, 16, 32})}, 7));
  auto b1 = body.Let("b1", Op("tile.load", {b, Ints({0, 32, 0}), Ints({2, 32, 16})}, 8));
  auto next = body.Let("next", Op("tile.matmul_acc", {acc, a1, b1}, 9));
  body.body.push_back(std::make_shared<YieldStmt>(std::vector<ExprPtr>{next}));
  auto result = std::make_shared<Var>("result", init->type());
  k.body.push_back(std::make_shared<ForStmt>(i, testing::Index(0), testing::Index(1), testing::Index(1),
                                             std::vector<IterArg>{{acc, init}},
                                             std::make_shared<SeqStmts>(body.body), std::vector<VarPtr>{result},
                                             ForKind::Sequential));
  k.Eval(Op("tile.store", {result, Ints({0, 0, 0}), c}, 10));
  auto flat = FlattenOk(k.Program({a, b, c}, c));
  ASSERT_TRUE(flat);
  EXPECT_EQ(Kernel(flat),
            "@pl.function(type=pl.FunctionType.InCore)\n"
            "def k(self, a: pl.Tensor[[2, 16, 64], pl.FP32], b: pl.Tensor[[2, 64, 16], pl.FP32], "
            "c: pl.Out[pl.Tensor[[2, 16, 16], pl.FP32]]) -> pl.Tensor[[2, 16, 16], pl.FP32]:\n"
            "    a0_b0: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0, 0], [1, 16, 32])\n"
            "    b0_b0: pl.Tile[[32, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [0, 0, 0], [1, 32, 16])\n"
            "    init_b0: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(a0_b0, b0_b0)\n"
            "    a0_b1: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [1, 0, 0], [1, 16, 32])\n"
            "    b0_b1: pl.Tile[[32, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [1, 0, 0], [1, 32, 16])\n"
            "    init_b1: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(a0_b1, b0_b1)\n"
            "    for i, (acc_b0, acc_b1) in pl.range(1, init_values=(init_b0, init_b1)):\n"
            "        a1_b0: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0, 32], [1, 16, 32])\n"
            "        b1_b0: pl.Tile[[32, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [0, 32, 0], [1, 32, 16])\n"
            "        next_b0: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(acc_b0, a1_b0, b1_b0)\n"
            "        a1_b1: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [1, 0, 32], [1, 16, 32])\n"
            "        b1_b1: pl.Tile[[32, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [1, 32, 0], [1, 32, 16])\n"
            "        next_b1: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(acc_b1, a1_b1, b1_b1)\n"
            "        result_b0, result_b1 = pl.yield_(next_b0, next_b1)\n"
            "    pl.tile.store(result_b0, [0, 0, 0], c)\n"
            "    pl.tile.store(result_b1, [1, 0, 0], c)\n"
            "    return c\n");
}

// A batched product read by a loop other than as a carried value keeps its kernel N-d.
TEST(FlattenBatchMatmul, AProductReadInsideALoopKeepsItsKernelNd) {
  auto a = testing::Tensor("a", {2, 16, 32}), b = testing::Tensor("b", {2, 32, 16});
  auto c = testing::Tensor("c", {2, 16, 16});
  KernelBuilder k;
  auto ta = k.Let("ta", Op("tile.load", {a, Ints({0, 0, 0}), Ints({2, 16, 32})}, 3));
  auto tb = k.Let("tb", Op("tile.load", {b, Ints({0, 0, 0}), Ints({2, 32, 16})}, 4));
  auto tc = k.Let("tc", Op("tile.matmul", {ta, tb}, 5));
  auto i = testing::LoopVar("i", 6);
  KernelBuilder body;
  body.Eval(Op("tile.store", {tc, Ints({0, 0, 0}), c}, 7));
  k.body.push_back(std::make_shared<ForStmt>(i, testing::Index(0), testing::Index(2), testing::Index(1),
                                             std::make_shared<SeqStmts>(body.body), ForKind::Sequential));
  auto program = k.Program({a, b, c}, c);
  auto why = FlattenKernelTiles(std::const_pointer_cast<Function>(program->Find("k")));
  ASSERT_FALSE(why);
  EXPECT_EQ(why.error(), "the product 'tc' of a matmul over a batch is read by a loop, which has no per-batch form");
}

// A product read by a vector op (not a store or a matmul_acc) keeps its kernel N-d.
TEST(FlattenBatchMatmul, AProductReadByAVectorOpKeepsItsKernelNd) {
  auto a = testing::Tensor("a", {2, 16, 32}), b = testing::Tensor("b", {2, 32, 16});
  auto c = testing::Tensor("c", {2, 16, 16});
  KernelBuilder k;
  auto ta = k.Let("ta", Op("tile.load", {a, Ints({0, 0, 0}), Ints({2, 16, 32})}, 3));
  auto tb = k.Let("tb", Op("tile.load", {b, Ints({0, 0, 0}), Ints({2, 32, 16})}, 4));
  auto tc = k.Let("tc", Op("tile.matmul", {ta, tb}, 5));
  auto te = k.Let("te", Op("tile.exp", {tc}, 6));
  k.Eval(Op("tile.store", {te, Ints({0, 0, 0}), c}, 7));
  auto kernel = std::const_pointer_cast<Function>(k.Program({a, b, c}, c)->Find("k"));
  auto why = FlattenKernelTiles(kernel);
  ASSERT_FALSE(why);
  EXPECT_EQ(why.error(), "the product 'tc' of a matmul over a batch is read by tile.exp, which has no per-batch form");
}

}  // namespace
}  // namespace pypto::passes
