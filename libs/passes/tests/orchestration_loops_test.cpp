// pl.at scopes inside orchestration loops (pypto-lib's hello_world): each scope is outlined once, its
// call stays in the loop, and the orchestration scalars it reads become scalar parameters.
#include <gtest/gtest.h>

#include "pypto/ir/functor.h"
#include "pypto/ir/printer.h"
#include "pypto/passes/passes.h"
#include "pypto/passes/pipeline.h"
#include "pass_test_util.h"
#include "sample_programs.h"

namespace pypto::passes {
namespace {

using testing::RunOk;
using testing::RunPipeline;

TEST(OutlineIncoreScopes, ScopeInNestedLoopsTakesTheLoopVariables) {
  auto program = RunOk({FlattenCallExpr(), OutlineIncoreScopes()}, testing::HelloWorldProgram());
  ASSERT_TRUE(program);
  EXPECT_EQ(ir::PrintProgram(*program),
            "@pl.program\n"
            "class _jit_hello_world:\n"
            "    @pl.function(type=pl.FunctionType.InCore)\n"
            "    def add_scalar(self, x: pl.Tensor[[1024, 512], pl.FP32], r: pl.Scalar[pl.INDEX], "
            "c: pl.Scalar[pl.INDEX], y: pl.Out[pl.Tensor[[1024, 512], pl.FP32]]) -> pl.Tensor[[1024, 512], pl.FP32]:\n"
            "        t: pl.Tile[[128, 256], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [r, c], [128, 256])\n"
            "        __tmp_v0: pl.Tile[[128, 256], pl.FP32, pl.Mem.Vec] = pl.tile.adds(t, 1.0)\n"
            "        pl.tile.store(__tmp_v0, [r, c], y)\n"
            "        return y\n"
            "\n"
            "    @pl.function(type=pl.FunctionType.Orchestration)\n"
            "    def hello_world(self, x: pl.Tensor[[1024, 512], pl.FP32], "
            "y: pl.Out[pl.Tensor[[1024, 512], pl.FP32]]) -> pl.Tensor[[1024, 512], pl.FP32]:\n"
            "        for r in pl.parallel(0, 1024, 128):\n"
            "            for c in pl.range(0, 512, 256):\n"
            "                y_1: pl.Tensor[[1024, 512], pl.FP32] = self.add_scalar(x, r, c, y)\n"
            "        return y\n");
  const auto kernel = program->Find("add_scalar");
  ASSERT_TRUE(kernel);
  using P = ir::ParamDirection;
  EXPECT_EQ(kernel->param_directions(), (std::vector<P>{P::In, P::In, P::In, P::Out}));
}

TEST(OutlineIncoreScopes, SeveralScopesPerLoopBodyWithOrchestrationScalars) {
  auto program = RunOk({FlattenCallExpr(), OutlineIncoreScopes(), ExpandMixedKernel(), AllocateMemoryAddr(),
                        DeriveCallDirections()},
                       testing::TwoStageLoopProgram());
  ASSERT_TRUE(program);
  // The values computed in the orchestration (k0, row) are parameters of the kernels that read them;
  // the second scope reads the version of `y` the first one wrote in the same iteration.
  EXPECT_EQ(ir::PrintFunction(*program->Find("two_stage")),
            "@pl.function(type=pl.FunctionType.Orchestration)\n"
            "def two_stage(self, x: pl.Tensor[[256, 32], pl.FP32], y: pl.Out[pl.Tensor[[256, 32], pl.FP32]], "
            "z: pl.Out[pl.Tensor[[256, 32], pl.FP32]]) -> pl.Tensor[[256, 32], pl.FP32]:\n"
            "    for kb in pl.range(4):\n"
            "        k0: pl.Scalar[pl.INDEX] = kb * 64\n"
            "        y_1: pl.Tensor[[256, 32], pl.FP32] = self.two_stage_incore_0(x, k0, y, attrs={\"arg_directions\": "
            "[\"Input\", \"Scalar\", \"OutputExisting\"]})\n"
            "        row: pl.Scalar[pl.INDEX] = (k0 // 2) * 2\n"
            "        z_1: pl.Tensor[[256, 32], pl.FP32] = self.scale(y_1, row, z, attrs={\"arg_directions\": "
            "[\"Input\", \"Scalar\", \"OutputExisting\"]})\n"
            "    return z\n");
  const std::string scale = ir::PrintFunction(*program->Find("scale"));
  EXPECT_TRUE(scale.starts_with("@pl.function(type=pl.FunctionType.AIV)\n"
                                "def scale(self, y: pl.Tensor[[256, 32], pl.FP32], row: pl.Scalar[pl.INDEX], "
                                "z: pl.Out[pl.Tensor[[256, 32], pl.FP32]]) -> pl.Tensor[[256, 32], pl.FP32]:\n"))
      << scale;
  ASSERT_EQ(program->functions().size(), 3u);
  EXPECT_EQ(program->functions()[0]->name(), "two_stage_incore_0");
  EXPECT_EQ(program->functions()[1]->name(), "scale");
}

TEST(DeriveCallDirections, IndexScalarsInLoopsGetScalar) {
  auto program =
      RunOk({FlattenCallExpr(), OutlineIncoreScopes(), DeriveCallDirections()}, testing::HelloWorldProgram());
  ASSERT_TRUE(program);
  struct Calls final : ir::IRVisitor {
    std::vector<std::vector<ir::ArgDirection>> seen;
    void VisitCall(const std::shared_ptr<const ir::Call>& call) override {
      if (!call->is_op_call()) seen.push_back(call->arg_directions());
      ir::IRVisitor::VisitCall(call);
    }
  } calls;
  calls.VisitStmt(program->Find("hello_world")->body());
  using D = ir::ArgDirection;
  EXPECT_EQ(calls.seen, (std::vector<std::vector<D>>{{D::Input, D::Scalar, D::Scalar, D::OutputExisting}}));
}

// `y0 = scope(x -> y)` at the top, a loop whose scopes read it and write z, then a scope after the
// loop: kernels are numbered in program order, and a version made inside the loop does not leak out.
TEST(OutlineIncoreScopes, ScopesBeforeInAndAfterALoop) {
  auto x = testing::Tensor("x", {128, 32}), y = testing::Tensor("y", {128, 32}), z = testing::Tensor("z", {128, 32});
  auto i = testing::LoopVar("i", 4);
  auto zero = testing::Index(0);
  std::vector<ir::StmtPtr> loop_body = {
      testing::Scope("", testing::ScalarTileRegion(y, z, i, zero, 64, 32, "tile.muls", 2.0, 6), 5),
      testing::Scope("", testing::ScalarTileRegion(z, y, i, zero, 64, 32, "tile.adds", 3.0, 8), 7)};
  std::vector<ir::StmtPtr> body = {
      testing::Scope("", testing::ScalarTileRegion(x, y, zero, zero, 128, 32, "tile.adds", 1.0, 3), 2),
      testing::Loop(i, testing::Index(0), testing::Index(128), testing::Index(64), std::move(loop_body)),
      testing::Scope("", testing::ScalarTileRegion(z, x, zero, zero, 128, 32, "tile.adds", 4.0, 11), 10),
      std::make_shared<ir::ReturnStmt>(std::vector<ir::ExprPtr>{y})};
  using P = ir::ParamDirection;
  auto fn = std::make_shared<ir::Function>("f", std::vector<ir::VarPtr>{x, y, z},
                                           std::vector<P>{P::InOut, P::Out, P::Out},
                                           std::vector<ir::TypePtr>{y->type()},
                                           std::make_shared<ir::SeqStmts>(std::move(body)), ir::FunctionType::Opaque);
  auto program = RunOk({FlattenCallExpr(), OutlineIncoreScopes()},
                       std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{fn}, "f"));
  ASSERT_TRUE(program);
  EXPECT_EQ(ir::PrintFunction(*program->Find("f")),
            "@pl.function(type=pl.FunctionType.Orchestration)\n"
            "def f(self, x: pl.InOut[pl.Tensor[[128, 32], pl.FP32]], y: pl.Out[pl.Tensor[[128, 32], pl.FP32]], "
            "z: pl.Out[pl.Tensor[[128, 32], pl.FP32]]) -> pl.Tensor[[128, 32], pl.FP32]:\n"
            "    y_1: pl.Tensor[[128, 32], pl.FP32] = self.f_incore_0(x, y)\n"
            "    for i in pl.range(0, 128, 64):\n"
            "        z_1: pl.Tensor[[128, 32], pl.FP32] = self.f_incore_1(y_1, i, z)\n"
            "        y_2: pl.Tensor[[128, 32], pl.FP32] = self.f_incore_2(z_1, i, y_1)\n"
            "    x_1: pl.Tensor[[128, 32], pl.FP32] = self.f_incore_3(z, x)\n"
            "    return y_1\n");
  EXPECT_EQ(program->Find("f_incore_1")->params()[1]->type()->str(), "pl.Scalar[pl.INDEX]");
}

TEST(OutlineIncoreScopes, ValueComputedInALoopScopeCannotLeaveTheLoop) {
  // for i in ...: with pl.at(): w = pl.store(t, [i, 0], y)   and then   return w
  auto x = testing::Tensor("x", {128, 32}), y = testing::Tensor("y", {128, 32});
  auto i = testing::LoopVar("i", 3);
  auto offsets = std::make_shared<ir::TupleLiteral>(std::vector<ir::ExprPtr>{i, testing::Index(0)});
  auto load = testing::Op("tile.load", {x, offsets, testing::Ints({64, 32})}, 5);
  auto t = testing::Local("t", load);
  auto store = testing::Op("tile.store", {t, offsets, y}, 6);
  auto w = std::make_shared<ir::Var>("w", store->type(), ir::Span{"k.py", 6, 13});
  auto loop = testing::Loop(i, testing::Index(0), testing::Index(128), testing::Index(64),
                            {testing::Scope("", {testing::Assign(t, load), testing::Assign(w, store)}, 4)});
  auto ret = std::make_shared<ir::ReturnStmt>(std::vector<ir::ExprPtr>{w}, ir::Span{"k.py", 7, 5});
  using P = ir::ParamDirection;
  auto fn = std::make_shared<ir::Function>("f", std::vector<ir::VarPtr>{x, y}, std::vector<P>{P::In, P::Out},
                                           std::vector<ir::TypePtr>{y->type()},
                                           std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{loop, ret}),
                                           ir::FunctionType::Opaque);
  auto result =
      RunPipeline({OutlineIncoreScopes()}, std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{fn}, "f"));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message,
            "'w' is computed inside the pl.at scope in the loop over 'i' and used after the loop; only tensors "
            "written with pl.store leave a kernel, and they keep their own names");
}

TEST(OutlineIncoreScopes, ComputedBlockCountStaysOnTheLaunch) {
  // `with pl.spmd(n) as tid:` with `n = i * 3 - 2` computed in the loop: the kernel's call keeps the
  // count, as an expression of the orchestration scalar, through outlining and the later passes.
  auto program = RunOk({FlattenCallExpr(), OutlineIncoreScopes(), ExpandMixedKernel(), AllocateMemoryAddr(),
                        DeriveCallDirections()},
                       testing::SpmdComputedBlocksProgram(3, 2));
  ASSERT_TRUE(program);
  EXPECT_EQ(ir::PrintFunction(*program->Find("spmd_blocks")),
            "@pl.function(type=pl.FunctionType.Orchestration)\n"
            "def spmd_blocks(self, x: pl.Tensor[[64, 32], pl.FP32], y: pl.Out[pl.Tensor[[64, 32], pl.FP32]], "
            "z: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:\n"
            "    for i in pl.range(3):\n"
            "        n: pl.Scalar[pl.INDEX] = (i * 3) - 2\n"
            "        with pl.spmd(core_num=n) as tid:\n"
            "            y_1: pl.Tensor[[64, 32], pl.FP32] = self.fill(x, y, attrs={\"arg_directions\": "
            "[\"Input\", \"OutputExisting\"]})\n"
            "        z_1, _ = pl.submit(self.scale, y_1, z, attrs={\"arg_directions\": "
            "[\"Input\", \"OutputExisting\"]}, deps=[tid])\n"
            "    return z\n");
}

}  // namespace
}  // namespace pypto::passes
