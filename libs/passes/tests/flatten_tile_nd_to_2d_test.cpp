// FlattenTileNdTo2D on hand-built kernels: the printed kernel after the pass (N-d windows loaded
// into 2-D tiles, element-wise ops, a row reduction, stores naming their N-d window), idempotence,
// kernels it leaves as they are, and the TileOps2D verifier.
#include <gtest/gtest.h>

#include "kernel_builder.h"
#include "pass_test_util.h"
#include "pypto/ir/printer.h"
#include "pypto/ir/structural_equal.h"
#include "pypto/passes/ir_property.h"
#include "pypto/passes/passes.h"
#include "sample_programs.h"

namespace pypto::passes {
namespace {

using namespace ir;
using testing::Ints;
using testing::Local;
using testing::Op;
using testing::OpWithKwargs;

using testing::KernelBuilder;

std::string Kernel(const ProgramPtr& program) { return PrintFunction(*program->Find("k")); }

Result<ProgramPtr> Flatten(const ProgramPtr& program) { return testing::RunPipeline({FlattenTileNdTo2D()}, program); }

// y = exp(x) over a [2, 16, 64] window; s = row_sum of batch 1, stored into s[1].
ProgramPtr LoadExpReduceStore() {
  auto x = testing::Tensor("x", {2, 16, 64}), y = testing::Tensor("y", {2, 16, 64});
  auto s = testing::Tensor("s", {2, 16, 1});
  KernelBuilder k;
  auto t = k.Let("t", Op("tile.load", {x, Ints({0, 0, 0}), Ints({2, 16, 64})}, 3));
  auto e = k.Let("e", Op("tile.exp", {t}, 4));
  k.Eval(Op("tile.store", {e, Ints({0, 0, 0}), y}, 5));
  auto u = k.Let("u", Op("tile.load", {x, Ints({1, 0, 0}), Ints({1, 16, 64})}, 6));
  auto tmp = k.Let("tmp", OpWithKwargs("tile.create", {Ints({1, 16, 64})}, {{"dtype", DataType::FP32}}, 7));
  auto r = k.Let("r", Op("tile.row_sum", {u, tmp}, 8));
  k.Eval(Op("tile.store", {r, Ints({1, 0, 0}), s}, 9));
  return k.Program({x, y, s}, s);
}

TEST(FlattenTileNdTo2D, MergesLeadingDimensionsIntoRowsAndKeepsTheTensorWindows) {
  auto flat = Flatten(LoadExpReduceStore());
  ASSERT_TRUE(flat) << flat.error().str();
  EXPECT_EQ(Kernel(*flat),
            "@pl.function(type=pl.FunctionType.InCore)\n"
            "def k(self, x: pl.Tensor[[2, 16, 64], pl.FP32], y: pl.Tensor[[2, 16, 64], pl.FP32], "
            "s: pl.Out[pl.Tensor[[2, 16, 1], pl.FP32]]) -> pl.Tensor[[2, 16, 1], pl.FP32]:\n"
            "    t: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0, 0], [2, 16, 64])\n"
            "    e: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)\n"
            "    pl.tile.store(e, [0, 0, 0], y, [2, 16, 64])\n"
            "    u: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [1, 0, 0], [1, 16, 64])\n"
            "    tmp: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.create([16, 64], dtype=pl.FP32)\n"
            "    r: pl.Tile[[16, 1], pl.FP32, pl.Mem.Vec] = pl.tile.row_sum(u, tmp)\n"
            "    pl.tile.store(r, [1, 0, 0], s)\n"
            "    return s\n");
}

TEST(FlattenTileNdTo2D, IsIdempotent) {
  auto once = Flatten(LoadExpReduceStore());
  ASSERT_TRUE(once) << once.error().str();
  auto twice = Flatten(*once);
  ASSERT_TRUE(twice) << twice.error().str();
  EXPECT_EQ(Kernel(*twice), Kernel(*once));
  EXPECT_EQ(twice->get()->Find("k"), once->get()->Find("k"));  // nothing left to rewrite: the same function
}

TEST(FlattenTileNdTo2D, AReshapeToTheMergedShapeGoesAndItsResultIsTheSource) {
  auto x = testing::Tensor("x", {1, 16, 64}), y = testing::Tensor("y", {16, 64});
  KernelBuilder k;
  auto t = k.Let("t", Op("tile.load", {x, Ints({0, 0, 0}), Ints({1, 16, 64})}, 3));
  auto m = k.Let("m", Op("tile.reshape", {t, Ints({16, 64})}, 4));
  auto n = k.Let("n", Op("tile.neg", {m}, 5));
  k.Eval(Op("tile.store", {n, Ints({0, 0}), y}, 6));
  auto flat = Flatten(k.Program({x, y}, y));
  ASSERT_TRUE(flat) << flat.error().str();
  EXPECT_EQ(Kernel(*flat),
            "@pl.function(type=pl.FunctionType.InCore)\n"
            "def k(self, x: pl.Tensor[[1, 16, 64], pl.FP32], y: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> "
            "pl.Tensor[[16, 64], pl.FP32]:\n"
            "    t: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0, 0], [1, 16, 64])\n"
            "    n: pl.Tile[[16, 64], pl.FP32, pl.Mem.Vec] = pl.tile.neg(t)\n"
            "    pl.tile.store(n, [0, 0], y)\n"
            "    return y\n");
}

TEST(FlattenTileNdTo2D, ATileCarriedByALoopIsCarriedInItsMergedForm) {
  auto x = testing::Tensor("x", {4, 8, 32}), y = testing::Tensor("y", {4, 8, 32});
  KernelBuilder k;
  auto init = k.Let("init", Op("tile.load", {x, Ints({0, 0, 0}), Ints({4, 8, 32})}, 3));
  auto i = testing::LoopVar("i", 4);
  auto acc = std::make_shared<Var>("acc", init->type());
  auto next = Local("next", Op("tile.add", {acc, acc}, 5));
  auto body = std::make_shared<SeqStmts>(std::vector<StmtPtr>{
      testing::Assign(next, Op("tile.add", {acc, acc}, 5)),
      std::make_shared<YieldStmt>(std::vector<ExprPtr>{next})});
  auto result = std::make_shared<Var>("result", init->type());
  k.body.push_back(std::make_shared<ForStmt>(i, testing::Index(0), testing::Index(3), testing::Index(1),
                                             std::vector<IterArg>{{acc, init}}, body, std::vector<VarPtr>{result},
                                             ForKind::Sequential));
  k.Eval(Op("tile.store", {result, Ints({0, 0, 0}), y}, 7));
  auto flat = Flatten(k.Program({x, y}, y));
  ASSERT_TRUE(flat) << flat.error().str();
  const std::string text = Kernel(*flat);
  EXPECT_NE(text.find("for i, (acc,) in pl.range(3, init_values=(init,)):"), std::string::npos) << text;
  EXPECT_NE(text.find("next: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.add(acc, acc)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("pl.tile.store(result, [0, 0, 0], y, [4, 8, 32])"), std::string::npos) << text;
  EXPECT_EQ(text.find("[4, 8, 32], pl.FP32, pl.Mem.Vec"), std::string::npos) << text;
}

// A transpose over a batch has no 2-D form: merged, [2, 16, 32] would transpose as one [32, 32]
// matrix.
TEST(FlattenTileNdTo2D, AKernelWithAnOpThatHasNo2DFormIsLeftAsItIs) {
  auto x = testing::Tensor("x", {2, 16, 32}), y = testing::Tensor("y", {2, 32, 16});
  KernelBuilder k;
  auto t = k.Let("t", Op("tile.load", {x, Ints({0, 0, 0}), Ints({2, 16, 32})}, 3));
  auto u = k.Let("u", OpWithKwargs("tile.transpose", {t}, {{"axis1", int64_t{1}}, {"axis2", int64_t{2}}}, 4));
  k.Eval(Op("tile.store", {u, Ints({0, 0, 0}), y}, 5));
  auto program = k.Program({x, y}, y);
  auto flat = Flatten(program);
  ASSERT_TRUE(flat) << flat.error().str();
  EXPECT_EQ(flat->get()->Find("k"), program->Find("k"));
  // ... and TileOps2D holds: that kernel has no 2-D form to be in.
  auto verified = VerifyProperty(IRProperty::TileOps2D, **flat);
  EXPECT_TRUE(verified) << verified.error().str();
}

// torch.gather along axis 1 of [2, 8, 8] picks rows within each batch; on the merged [16, 8] tile,
// axis 1 would be the columns.
TEST(FlattenTileNdTo2D, AGatherAlongALeadingAxisKeepsItsKernel) {
  auto x = testing::Tensor("x", {2, 8, 8}), i = testing::Tensor("i", {2, 3, 8}, DataType::INT32);
  auto y = testing::Tensor("y", {2, 3, 8});
  KernelBuilder k;
  auto tx = k.Let("tx", Op("tile.load", {x, Ints({0, 0, 0}), Ints({2, 8, 8})}, 3));
  auto ti = k.Let("ti", Op("tile.load", {i, Ints({0, 0, 0}), Ints({2, 3, 8})}, 4));
  auto g = k.Let("g", OpWithKwargs("tile.gather_dim", {tx, ti}, {{"dim", int64_t{1}}}, 5));
  k.Eval(Op("tile.store", {g, Ints({0, 0, 0}), y}, 6));
  auto program = k.Program({x, i, y}, y);
  auto flat = Flatten(program);
  ASSERT_TRUE(flat) << flat.error().str();
  EXPECT_EQ(flat->get()->Find("k"), program->Find("k"));
}

TEST(FlattenTileNdTo2D, AStoreOfABatchWithAPartialValidRegionKeepsItsKernel) {
  // [2, v, 64] valid of [2, 16, 64]: the valid rows of the two batches are not one run of merged rows.
  auto x = testing::Tensor("x", {2, 16, 64}), y = testing::Tensor("y", {2, 16, 64});
  KernelBuilder k;
  auto v = testing::Scalar("v", DataType::INDEX);
  auto valid = std::make_shared<TupleLiteral>(std::vector<ExprPtr>{testing::Index(2), v, testing::Index(64)});
  auto t = k.Let("t", Op("tile.load", {x, Ints({0, 0, 0}), Ints({2, 16, 64}), valid}, 3));
  k.Eval(Op("tile.store", {t, Ints({0, 0, 0}), y}, 4));
  auto program = k.Program({x, v, y}, y);
  auto flat = Flatten(program);
  ASSERT_TRUE(flat) << flat.error().str();
  EXPECT_EQ(flat->get()->Find("k"), program->Find("k"));
}

TEST(FlattenTileNdTo2D, TheVerifierRejectsARank3TileOfAKernelThatHasA2DForm) {
  auto verified = VerifyProperty(IRProperty::TileOps2D, *LoadExpReduceStore());
  ASSERT_FALSE(verified);
  EXPECT_EQ(verified.error().str(),
            "k.py:3:9: error: property TileOps2D does not hold in function 'k': tile 't' "
            "pl.Tile[[2, 16, 64], pl.FP32, pl.Mem.Vec] has rank 3, and the kernel has a 2-D form");
}

TEST(FlattenTileNdTo2D, RequiresOutlinedKernels) {
  auto flat = Flatten(testing::TileAddProgram());
  ASSERT_FALSE(flat);
  EXPECT_NE(flat.error().message.find("pass FlattenTileNdTo2D requires"), std::string::npos) << flat.error().str();
}

}  // namespace
}  // namespace pypto::passes
