// OutlineIncoreScopes: pl.at regions become InCore kernels called from an orchestration function.
// On the hello-world program; on an entry calling kernels defined as functions of their own
// (upstream's `@pl.jit.incore` kernels called from a `@pl.jit` entry); on scopes inside
// orchestration loops, whose loop variables and orchestration scalars become scalar parameters; and
// on a tile computed in one scope and read by a later one, handed over through a tensor.
#include <gtest/gtest.h>

#include "mixed_scope_programs.h"
#include "pass_test_util.h"
#include "pypto/ir/printer.h"
#include "pypto/passes/passes.h"
#include "sample_programs.h"

namespace pypto::passes {
namespace {

using ir::PrintFunction;
using testing::RunOk;
using testing::RunPipeline;
using testing::mixed_scope::StagedProgram;

constexpr const char* kSignature =
    "(self, a: pl.Tensor[[128, 128], pl.FP32], b: pl.Tensor[[128, 128], pl.FP32], "
    "c: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:\n";

TEST(OutlineIncoreScopes, RegionBecomesKernelAndParentOrchestration) {
  auto program = RunOk({OutlineIncoreScopes()}, testing::TileAddProgram());
  ASSERT_TRUE(program);
  std::string expected = std::string("@pl.program\nclass _jit_tile_add:\n") +
                         "    @pl.function(type=pl.FunctionType.InCore)\n"
                         "    def tile_add_incore_0" + kSignature +
                         "        tile_a: pl.Tile[[128, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [128, 128])\n"
                         "        tile_b: pl.Tile[[128, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [0, 0], [128, 128])\n"
                         "        tile_c: pl.Tile[[128, 128], pl.FP32, pl.Mem.Vec] = pl.tile.add(tile_a, tile_b)\n"
                         "        pl.tile.store(tile_c, [0, 0], c)\n"
                         "        return c\n"
                         "\n"
                         "    @pl.function(type=pl.FunctionType.Orchestration)\n"
                         "    def tile_add" + kSignature +
                         "        c_1: pl.Tensor[[128, 128], pl.FP32] = self.tile_add_incore_0(a, b, c)\n"
                         "        return c_1\n";
  EXPECT_EQ(ir::PrintProgram(*program), expected);
}

TEST(OutlineIncoreScopes, InferredDirections) {
  auto program = RunOk({OutlineIncoreScopes()}, testing::TileAddProgram());
  auto kernel = program->Find("tile_add_incore_0");
  ASSERT_TRUE(kernel);
  EXPECT_EQ(kernel->param_directions(),
            (std::vector<ir::ParamDirection>{ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::Out}));
}

TEST(OutlineIncoreScopes, EntryCallingKernelsBecomesOrchestration) {
  auto original = testing::VectorDagProgram();
  auto program = RunOk({OutlineIncoreScopes()}, original);
  ASSERT_TRUE(program);
  EXPECT_EQ(program->Find("vector_dag")->type(), ir::FunctionType::Orchestration);
  // Nothing is outlined: the kernels stay as they are, in order.
  ASSERT_EQ(program->functions().size(), 4u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(program->functions()[i], original->functions()[i]);
  EXPECT_EQ(program->Find("kernel_add_scalar")->type(), ir::FunctionType::InCore);
}

TEST(OutlineIncoreScopes, OpaqueFunctionWithoutKernelCallsStaysOpaque) {
  std::vector<ir::StmtPtr> body;
  auto t = testing::CreateTensor("t", 16, 16, body);
  body.push_back(std::make_shared<ir::ReturnStmt>(std::vector<ir::ExprPtr>{t}));
  auto fn = std::make_shared<ir::Function>("f", std::vector<ir::VarPtr>{}, std::vector<ir::ParamDirection>{},
                                           std::vector<ir::TypePtr>{t->type()},
                                           std::make_shared<ir::SeqStmts>(std::move(body)), ir::FunctionType::Opaque);
  auto program = RunOk({OutlineIncoreScopes()}, std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{fn}, "f"));
  ASSERT_TRUE(program);
  EXPECT_EQ(program->Find("f")->type(), ir::FunctionType::Opaque);
}

// `s = pl.read(scales, [2])` in orchestration code, used only inside a region: the kernel reads it
// itself (scales becomes its parameter) and the orchestration keeps no read.
TEST(OutlineIncoreScopes, AnOrchestrationReadUsedByARegionIsReadByItsKernel) {
  using namespace ir;
  auto x = testing::Tensor("x", {16, 16}), scales = testing::Tensor("scales", {4}), y = testing::Tensor("y", {16, 16});
  auto read = testing::Op("tensor.read", {scales, testing::Ints({2})});
  auto s = testing::Local("s", read);
  auto load = testing::Op("tile.load", {x, testing::Ints({0, 0}), testing::Ints({16, 16})});
  auto t = testing::Local("t", load);
  auto scaled = testing::Op("tile.muls", {t, s});
  auto u = testing::Local("u", scaled);
  auto store = testing::Op("tile.store", {u, testing::Ints({0, 0}), y});
  auto region = std::make_shared<InCoreScopeStmt>(
      "scale", std::make_shared<SeqStmts>(std::vector<StmtPtr>{testing::Assign(t, load), testing::Assign(u, scaled),
                                                               std::make_shared<EvalStmt>(store)}));
  auto body = std::make_shared<SeqStmts>(std::vector<StmtPtr>{
      testing::Assign(s, read), region, std::make_shared<ReturnStmt>(std::vector<ExprPtr>{y})});
  auto f = std::make_shared<Function>("f", std::vector<VarPtr>{x, scales, y},
                                      std::vector<ParamDirection>{ParamDirection::In, ParamDirection::In,
                                                                  ParamDirection::Out},
                                      std::vector<TypePtr>{y->type()}, body, FunctionType::Opaque);
  auto program = RunOk({OutlineIncoreScopes()}, std::make_shared<Program>("p", std::vector<FunctionPtr>{f}, "f"));
  ASSERT_TRUE(program);
  EXPECT_EQ(PrintFunction(*program->Find("scale")),
            "@pl.function(type=pl.FunctionType.InCore)\n"
            "def scale(self, scales: pl.Tensor[[4], pl.FP32], x: pl.Tensor[[16, 16], pl.FP32], y: "
            "pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:\n"
            "    s: pl.Scalar[pl.FP32] = pl.tensor.read(scales, [2])\n"
            "    t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 16])\n"
            "    u: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.muls(t, s)\n"
            "    pl.tile.store(u, [0, 0], y)\n"
            "    return y\n");
  EXPECT_EQ(PrintFunction(*program->Find("f")),
            "@pl.function(type=pl.FunctionType.Orchestration)\n"
            "def f(self, x: pl.Tensor[[16, 16], pl.FP32], scales: pl.Tensor[[4], pl.FP32], y: "
            "pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:\n"
            "    y_1: pl.Tensor[[16, 16], pl.FP32] = self.scale(scales, x, y)\n"
            "    return y_1\n");
}

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

// The entry of the mixed-scope programs (mixed_scope_programs.h), once it is orchestration.
const char* kEntrySignature =
    "@pl.function(type=pl.FunctionType.Orchestration)\n"
    "def f(self, a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[32, 16], pl.FP16], "
    "bias: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> "
    "pl.Tensor[[16, 16], pl.FP32]:\n";

TEST(OutlineIncoreScopes, TileUsedByALaterScopeIsHandedOverThroughATensor) {
  auto program = RunOk({OutlineIncoreScopes()}, StagedProgram());
  ASSERT_TRUE(program);
  EXPECT_EQ(PrintFunction(*program->Find("f")),
            std::string(kEntrySignature) +
                "    acc: pl.Tensor[[16, 16], pl.FP32] = pl.tensor.create([16, 16], dtype=pl.FP32)\n"
                "    acc_1: pl.Tensor[[16, 16], pl.FP32] = self.cube_only(a, b, acc)\n"
                "    out_1: pl.Tensor[[16, 16], pl.FP32] = self.vector_only(bias, acc_1, out)\n"
                "    return out_1\n");
  // The producer stores the whole Acc tile; the consumer loads it back into Vec and adds in Vec.
  // (The printer numbers the second `acc` of a function.)
  EXPECT_EQ(PrintFunction(*program->Find("cube_only")),
            "@pl.function(type=pl.FunctionType.InCore)\n"
            "def cube_only(self, a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[32, 16], pl.FP16], "
            "acc: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:\n"
            "    tile_a: pl.Tile[[16, 32], pl.FP16, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 32])\n"
            "    tile_b: pl.Tile[[32, 16], pl.FP16, pl.Mem.Vec] = pl.tile.load(b, [0, 0], [32, 16])\n"
            "    acc_1: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(tile_a, tile_b)\n"
            "    acc_2: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(acc_1, [0, 0], acc)\n"
            "    return acc\n");
  EXPECT_EQ(PrintFunction(*program->Find("vector_only")),
            "@pl.function(type=pl.FunctionType.InCore)\n"
            "def vector_only(self, bias: pl.Tensor[[16, 16], pl.FP32], acc: pl.Tensor[[16, 16], pl.FP32], "
            "out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:\n"
            "    acc_1: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(acc, [0, 0], [16, 16])\n"
            "    tile_bias: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(bias, [0, 0], [16, 16])\n"
            "    sum: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.add(acc_1, tile_bias)\n"
            "    out_1: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(sum, [0, 0], out)\n"
            "    return out\n");
}

}  // namespace
}  // namespace pypto::passes
