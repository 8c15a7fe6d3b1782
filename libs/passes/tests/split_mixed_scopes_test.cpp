// SplitMixedScopes: a pl.at scope mixing a matmul with vector ops (as upstream's
// examples/advanced/03_mixed_kernel.py writes it) becomes a cube scope followed by a vector scope;
// a scope whose loop mixes both kinds of work, or that holds cube work only, is kept whole.
#include <gtest/gtest.h>

#include "mixed_scope_programs.h"
#include "pass_test_util.h"
#include "pypto/ir/functor.h"
#include "pypto/passes/passes.h"
#include "sample_programs.h"

namespace pypto::passes {
namespace {

using namespace ir;
using testing::Ints;
using testing::Op;
using testing::RunOk;
using testing::mixed_scope::a;
using testing::mixed_scope::AddBias;
using testing::mixed_scope::b;
using testing::mixed_scope::Body;
using testing::mixed_scope::Entry;
using testing::mixed_scope::KLoopMixedProgram;
using testing::mixed_scope::Matmul;
using testing::mixed_scope::MixedProgram;
using testing::mixed_scope::out;

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

}  // namespace
}  // namespace pypto::passes
