// Cube results leaving a kernel: a tile computed in one pl.at scope and read by a later one
// (handed over through an orchestration tensor by OutlineIncoreScopes), and a scope mixing a
// matmul with vector ops (split into a cube and a vector scope by SplitMixedScopes), as upstream's
// examples/advanced/03_mixed_kernel.py writes them.
#include <gtest/gtest.h>

#include "pass_test_util.h"
#include "pypto/ir/functor.h"
#include "pypto/ir/printer.h"
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
using testing::RunOk;

const VarPtr a = testing::Tensor("a", {16, 32}, DataType::FP16);
const VarPtr b = testing::Tensor("b", {32, 16}, DataType::FP16);
const VarPtr bias = testing::Tensor("bias", {16, 16});
const VarPtr out = testing::Tensor("out", {16, 16});

struct Body {
  std::vector<StmtPtr> stmts;
  VarPtr Let(const std::string& name, const ExprPtr& value) {
    auto var = Local(name, value);
    stmts.push_back(Assign(var, value));
    return var;
  }
};

// `acc = a @ b` as the frontend writes `pl.matmul(a, b, out_dtype=pl.FP32)` on whole tensors.
VarPtr Matmul(Body& body) {
  auto tile_a = body.Let("tile_a", Op("tile.load", {a, Ints({0, 0}), Ints({16, 32})}, 3));
  auto tile_b = body.Let("tile_b", Op("tile.load", {b, Ints({0, 0}), Ints({32, 16})}, 3));
  return body.Let("acc", Op("tile.matmul", {tile_a, tile_b}, 3));
}

// `out[:] = pl.add(acc, bias)`.
VarPtr AddBias(Body& body, const VarPtr& acc) {
  auto tile_bias = body.Let("tile_bias", Op("tile.load", {bias, Ints({0, 0}), Ints({16, 16})}, 5));
  auto sum = body.Let("sum", Op("tile.add", {acc, tile_bias}, 5));
  return body.Let("out_1", Op("tile.store", {sum, Ints({0, 0}), out}, 5));
}

ProgramPtr Entry(std::vector<StmtPtr> stmts, const VarPtr& result) {
  stmts.push_back(std::make_shared<ReturnStmt>(std::vector<ExprPtr>{result}));
  std::vector<ParamDirection> directions{ParamDirection::In, ParamDirection::In, ParamDirection::In,
                                         ParamDirection::Out};
  auto entry = std::make_shared<Function>("f", std::vector<VarPtr>{a, b, bias, out}, directions,
                                          std::vector<TypePtr>{result->type()},
                                          std::make_shared<SeqStmts>(std::move(stmts)), FunctionType::Opaque);
  return std::make_shared<Program>("p", std::vector<FunctionPtr>{entry}, "f");
}

// Two scopes: the matmul, then the bias add reading its result.
ProgramPtr StagedProgram() {
  Body cube, vector;
  auto acc = Matmul(cube);
  auto result = AddBias(vector, acc);
  return Entry({testing::Scope("cube_only", cube.stmts, 2), testing::Scope("vector_only", vector.stmts, 4)}, result);
}

// One scope holding both.
ProgramPtr MixedProgram() {
  Body mixed;
  auto result = AddBias(mixed, Matmul(mixed));
  return Entry({testing::Scope("mixed", mixed.stmts, 2)}, result);
}

// One scope: the matmul accumulated over a K loop that carries it (matmul_acc), then the bias add.
ProgramPtr KLoopMixedProgram() {
  Body mixed;
  auto first = Matmul(mixed);
  auto k = testing::LoopVar("k", 3);
  auto carried = std::make_shared<Var>("acc_k", first->type());
  Body loop;
  auto tile_a = loop.Let("tile_a_k", Op("tile.load", {a, Ints({0, 0}), Ints({16, 32})}, 3));
  auto tile_b = loop.Let("tile_b_k", Op("tile.load", {b, Ints({0, 0}), Ints({32, 16})}, 3));
  auto next = loop.Let("acc_next", Op("tile.matmul_acc", {carried, tile_a, tile_b}, 3));
  loop.stmts.push_back(std::make_shared<YieldStmt>(std::vector<ExprPtr>{next}));
  auto summed = std::make_shared<Var>("acc_sum", first->type());
  mixed.stmts.push_back(std::make_shared<ForStmt>(k, testing::Index(0), testing::Index(2), testing::Index(1),
                                                  std::vector<IterArg>{{carried, first}},
                                                  std::make_shared<SeqStmts>(loop.stmts),
                                                  std::vector<VarPtr>{summed}, ForKind::Sequential));
  auto result = AddBias(mixed, summed);
  return Entry({testing::Scope("mixed", mixed.stmts, 2)}, result);
}

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

// The bodies of the cube and vector scopes SplitMixedScopes makes of `program`'s one mixed scope.
struct SplitParts {
  std::vector<StmtPtr> cube, vector;
};

SplitParts Split(const ProgramPtr& program) {
  auto split = RunOk({FlattenCallExpr(), SplitMixedScopes()}, program);
  if (!split) return {};
  const auto stmts = FlattenStmts(split->Find("f")->body());
  EXPECT_EQ(stmts.size(), 3u);  // the two scopes and the return
  const auto* cube = stmts[0]->As<InCoreScopeStmt>();
  const auto* vector = stmts.size() > 1 ? stmts[1]->As<InCoreScopeStmt>() : nullptr;
  if (!cube || !vector) {
    ADD_FAILURE() << "no cube and vector scope";
    return {};
  }
  EXPECT_EQ(cube->name_hint(), "mixed_aic");
  EXPECT_EQ(vector->name_hint(), "mixed_aiv");
  return {FlattenStmts(cube->body()), FlattenStmts(vector->body())};
}

TEST(SplitMixedScopes, MatmulAndVectorOpsBecomeCubeThenVectorScope) {
  const SplitParts parts = Split(MixedProgram());
  EXPECT_EQ(parts.cube.size(), 3u);    // the two operand loads and the matmul
  EXPECT_EQ(parts.vector.size(), 3u);  // the bias load, the add and the store
}

TEST(SplitMixedScopes, AKReductionLoopIsCubeWorkWhole) {
  const SplitParts parts = Split(KLoopMixedProgram());
  ASSERT_EQ(parts.cube.size(), 4u);  // the operand loads, the first matmul and the K loop
  EXPECT_TRUE(parts.cube[3]->Is<ForStmt>());
  EXPECT_EQ(parts.vector.size(), 3u);  // the bias load, the add and the store
}

TEST(SplitMixedScopes, ALoopMixingCubeAndVectorWorkKeepsTheScopeWhole) {
  Body mixed;
  auto first = Matmul(mixed);
  auto k = testing::LoopVar("k", 3);
  Body loop;
  auto tile_a = loop.Let("tile_a_k", Op("tile.load", {a, Ints({0, 0}), Ints({16, 32})}, 3));
  loop.Let("doubled", Op("tile.add", {tile_a, tile_a}, 3));
  loop.Let("acc_k", Op("tile.matmul", {tile_a, Op("tile.load", {b, Ints({0, 0}), Ints({32, 16})}, 3)}, 3));
  mixed.stmts.push_back(std::make_shared<ForStmt>(k, testing::Index(0), testing::Index(2), testing::Index(1),
                                                  std::make_shared<SeqStmts>(loop.stmts), ForKind::Sequential));
  auto result = AddBias(mixed, first);
  auto program = RunOk({FlattenCallExpr(), SplitMixedScopes()}, Entry({testing::Scope("mixed", mixed.stmts, 2)}, result));
  ASSERT_TRUE(program);
  EXPECT_EQ(FlattenStmts(program->Find("f")->body()).size(), 2u);  // the scope and the return
}

TEST(SplitMixedScopes, CubeOnlyScopeIsKept) {
  Body cube;
  auto acc = Matmul(cube);
  auto stored = cube.Let("out_1", Op("tile.store", {acc, Ints({0, 0}), out}, 4));
  auto original = Entry({testing::Scope("gemm", cube.stmts, 2)}, stored);
  auto program = RunOk({FlattenCallExpr(), SplitMixedScopes()}, original);
  ASSERT_TRUE(program);
  EXPECT_EQ(FlattenStmts(program->Find("f")->body()).size(), 2u);
}

TEST(DefaultPipeline, MixedScopeLowersToAnAicAndAnAivKernel) {
  for (const auto& program_fn : {StagedProgram, MixedProgram, KLoopMixedProgram}) {
    auto program = RunOk({FlattenCallExpr(), SplitMixedScopes(), OutlineIncoreScopes(), InferTileMemorySpace(),
                          ExpandMixedKernel(), AllocateMemoryAddr(), DeriveCallDirections()},
                         program_fn());
    ASSERT_TRUE(program);
    std::vector<FunctionType> kernels;
    for (const auto& function : program->functions())
      if (IsKernel(function->type())) kernels.push_back(function->type());
    EXPECT_EQ(kernels, (std::vector<FunctionType>{FunctionType::AIC, FunctionType::AIV}));
  }
}

}  // namespace
}  // namespace pypto::passes
