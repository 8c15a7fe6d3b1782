// MaterializeRuntimeScopes: the orchestration body and each loop body outside a manual scope become
// automatic runtime scopes, a body's return or yield staying after its scope.
#include <gtest/gtest.h>

#include "pypto/ir/printer.h"
#include "pypto/passes/passes.h"
#include "pass_test_util.h"
#include "sample_programs.h"

namespace pypto::passes {
namespace {

using testing::Index;
using testing::RunOk;

TEST(MaterializeRuntimeScopes, OrchestrationBodyAndEachLoopBodyBecomeScopes) {
  auto program = RunOk({FlattenCallExpr(), OutlineIncoreScopes(), DeriveCallDirections(), MaterializeRuntimeScopes()},
                       testing::HelloWorldProgram());
  ASSERT_TRUE(program);
  EXPECT_EQ(ir::PrintFunction(*program->Find("hello_world")),
            "@pl.function(type=pl.FunctionType.Orchestration)\n"
            "def hello_world(self, x: pl.Tensor[[1024, 512], pl.FP32], "
            "y: pl.Out[pl.Tensor[[1024, 512], pl.FP32]]) -> pl.Tensor[[1024, 512], pl.FP32]:\n"
            "    with pl.scope():\n"
            "        for r in pl.parallel(0, 1024, 128):\n"
            "            with pl.scope():\n"
            "                for c in pl.range(0, 512, 256):\n"
            "                    with pl.scope():\n"
            "                        y_1: pl.Tensor[[1024, 512], pl.FP32] = self.add_scalar(x, r, c, y, "
            "attrs={\"arg_directions\": [\"Input\", \"Scalar\", \"Scalar\", \"OutputExisting\"]})\n"
            "    return y\n");
  // A second run finds every scope in place.
  auto again = RunOk({MaterializeRuntimeScopes()}, program);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->Find("hello_world"), program->Find("hello_world"));
}

// orch(x, y): `for i, (n,) in pl.range(4, init_values=(0,)): y_1 = self.k(x, x, y); m = n + i; n_r = yield(m)`,
// optionally inside `with pl.manual_scope():`; `attrs` are orch's.
ir::ProgramPtr CarryingLoopProgram(bool manual, std::map<std::string, ir::AttrValue> attrs = {}) {
  auto kernel = testing::BinaryKernel("k", "tile.add", 16, 16);
  auto x = testing::Tensor("x", {16, 16}), y = testing::Tensor("y", {16, 16});
  auto i = testing::LoopVar("i", 3);
  auto n = testing::Scalar("n", ir::DataType::INDEX), n_r = testing::Scalar("n_r", ir::DataType::INDEX);
  std::vector<ir::StmtPtr> body;
  testing::CallKernel(kernel, {x, x, y}, "y_1", body);
  auto m = testing::ScalarDef("m", testing::Binary(ir::BinaryOp::Add, n, i), body);
  body.push_back(std::make_shared<ir::YieldStmt>(std::vector<ir::ExprPtr>{m}));
  ir::StmtPtr loop = std::make_shared<ir::ForStmt>(
      i, Index(0), Index(4), Index(1), std::vector<ir::IterArg>{{n, Index(0)}},
      std::make_shared<ir::SeqStmts>(std::move(body)), std::vector<ir::VarPtr>{n_r}, ir::ForKind::Sequential);
  if (manual) loop = std::make_shared<ir::RuntimeScopeStmt>(/*manual=*/true, loop);
  auto entry = std::make_shared<ir::Function>(
      "orch", std::vector<ir::VarPtr>{x, y},
      std::vector<ir::ParamDirection>{ir::ParamDirection::In, ir::ParamDirection::Out}, std::vector<ir::TypePtr>{},
      std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{loop}), ir::FunctionType::Orchestration,
      std::move(attrs));
  return std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{kernel, entry}, "orch");
}

TEST(MaterializeRuntimeScopes, TheYieldStaysAfterTheIterationScope) {
  auto program = RunOk({DeriveCallDirections(), MaterializeRuntimeScopes()}, CarryingLoopProgram(false));
  ASSERT_TRUE(program);
  EXPECT_EQ(ir::PrintFunction(*program->Find("orch")),
            "@pl.function(type=pl.FunctionType.Orchestration)\n"
            "def orch(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):\n"
            "    with pl.scope():\n"
            "        for i, (n,) in pl.range(4, init_values=(0,)):\n"
            "            with pl.scope():\n"
            "                y_1: pl.Tensor[[16, 16], pl.FP32] = self.k(x, x, y, attrs={\"arg_directions\": "
            "[\"Input\", \"Input\", \"OutputExisting\"]})\n"
            "                m: pl.Scalar[pl.INDEX] = n + i\n"
            "            n_r: pl.Scalar[pl.INDEX] = pl.yield_(m)\n");
}

TEST(MaterializeRuntimeScopes, LoopsInAManualScopeStayUnscoped) {
  auto program = RunOk({DeriveCallDirections(), MaterializeRuntimeScopes()}, CarryingLoopProgram(true));
  ASSERT_TRUE(program);
  EXPECT_EQ(ir::PrintFunction(*program->Find("orch")),
            "@pl.function(type=pl.FunctionType.Orchestration)\n"
            "def orch(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):\n"
            "    with pl.scope():\n"
            "        with pl.scope(mode=pl.ScopeMode.MANUAL):\n"
            "            for i, (n,) in pl.range(4, init_values=(0,)):\n"
            "                y_1: pl.Tensor[[16, 16], pl.FP32] = self.k(x, x, y, attrs={\"arg_directions\": "
            "[\"Input\", \"Input\", \"OutputExisting\"]})\n"
            "                m: pl.Scalar[pl.INDEX] = n + i\n"
            "                n_r: pl.Scalar[pl.INDEX] = pl.yield_(m)\n");
}

// @pl.jit(auto_scope=False): the author places the scopes, so the pass opens none and the property
// holds as written (what no scope covers runs in the run's outer scope).
TEST(MaterializeRuntimeScopes, AnAutoScopeFalseFunctionKeepsOnlyItsOwnScopes) {
  auto program = RunOk({DeriveCallDirections(), MaterializeRuntimeScopes()},
                       CarryingLoopProgram(false, {{ir::kAutoScopeAttr, false}}));
  ASSERT_TRUE(program);
  EXPECT_EQ(ir::PrintFunction(*program->Find("orch")),
            "@pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)\n"
            "def orch(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):\n"
            "    for i, (n,) in pl.range(4, init_values=(0,)):\n"
            "        y_1: pl.Tensor[[16, 16], pl.FP32] = self.k(x, x, y, attrs={\"arg_directions\": "
            "[\"Input\", \"Input\", \"OutputExisting\"]})\n"
            "        m: pl.Scalar[pl.INDEX] = n + i\n"
            "        n_r: pl.Scalar[pl.INDEX] = pl.yield_(m)\n");
  EXPECT_TRUE(VerifyProperty(IRProperty::RuntimeScopesMaterialized, *program));
}

TEST(MaterializeRuntimeScopes, AutoScopeTrueWrittenOutIsTheDefault) {
  auto program = RunOk({DeriveCallDirections(), MaterializeRuntimeScopes()},
                       CarryingLoopProgram(false, {{ir::kAutoScopeAttr, true}}));
  ASSERT_TRUE(program);
  EXPECT_TRUE(ir::PrintFunction(*program->Find("orch")).starts_with(
      "@pl.function(type=pl.FunctionType.Orchestration)\n"
      "def orch(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):\n"
      "    with pl.scope():\n"
      "        for i, (n,) in pl.range(4, init_values=(0,)):\n"
      "            with pl.scope():\n"));
}

TEST(RuntimeScopesMaterialized, VerifierRejectsALoopBodyWithoutScope) {
  auto program = RunOk({DeriveCallDirections()}, CarryingLoopProgram(false));
  ASSERT_TRUE(program);
  // The body alone wrapped, as a hand-written `with pl.scope():` would: the loop still lacks its own.
  const auto& entry = program->Find("orch");
  auto wrapped = entry->WithBody(std::make_shared<ir::RuntimeScopeStmt>(/*manual=*/false, entry->body()));
  auto partial = std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{program->Find("k"), wrapped}, "orch");
  auto holds = VerifyProperty(IRProperty::RuntimeScopesMaterialized, *partial);
  ASSERT_FALSE(holds);
  EXPECT_EQ(holds.error().message,
            "property RuntimeScopesMaterialized does not hold in function 'orch': the loop body is not an automatic "
            "runtime scope");

  auto bare = VerifyProperty(IRProperty::RuntimeScopesMaterialized, *program);
  ASSERT_FALSE(bare);
  EXPECT_EQ(bare.error().message,
            "property RuntimeScopesMaterialized does not hold in function 'orch': the body is not one automatic "
            "runtime scope");
}

}  // namespace
}  // namespace pypto::passes
