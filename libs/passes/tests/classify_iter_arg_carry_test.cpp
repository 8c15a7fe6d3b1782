// ClassifyIterArgCarry: each value an orchestration loop carries is stamped with how the C++ carries
// it; a tensor the body yields back updated in place is an Alias, one it yields another buffer for a
// Rebind.
#include <gtest/gtest.h>

#include "pypto/ir/printer.h"
#include "pypto/passes/passes.h"
#include "pass_test_util.h"
#include "sample_programs.h"

namespace pypto::passes {
namespace {

using testing::Index;
using testing::RunOk;

std::vector<Pass> UpToRuntimeScopes() {
  return {OutlineIncoreScopes(), DeriveCallDirections(), MaterializeRuntimeScopes()};
}

TEST(ClassifyIterArgCarry, ATensorYieldedUpdatedInPlaceIsAnAliasAndAFreshBufferARebind) {
  auto passes = UpToRuntimeScopes();
  passes.push_back(ClassifyIterArgCarry());
  auto program = RunOk(std::move(passes), testing::RebindingLoopProgram());
  ASSERT_TRUE(program);
  EXPECT_EQ(ir::PrintFunction(*program->Find("rebind")),
            "@pl.function(type=pl.FunctionType.Orchestration)\n"
            "def rebind(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> "
            "pl.Tensor[[16, 16], pl.FP32]:\n"
            "    with pl.scope():\n"
            "        c: pl.Tensor[[16, 16], pl.FP32] = pl.tensor.create([16, 16], dtype=pl.FP32)\n"
            "        c_1: pl.Tensor[[16, 16], pl.FP32] = self.add(x, x, c, attrs={\"arg_directions\": "
            "[\"Input\", \"Input\", \"OutputExisting\"]})\n"
            "        spare: pl.Tensor[[16, 16], pl.FP32] = pl.tensor.create([16, 16], dtype=pl.FP32)\n"
            "        for i, (cur, other, acc) in pl.range(3, init_values=(c_1, spare, y), "
            "carry=(\"rebind\", \"rebind\", \"alias\")):\n"
            "            with pl.scope():\n"
            "                nxt: pl.Tensor[[16, 16], pl.FP32] = self.add(cur, cur, other, attrs={\"arg_directions\": "
            "[\"Input\", \"Input\", \"OutputExisting\"]})\n"
            "                acc_1: pl.Tensor[[16, 16], pl.FP32] = self.add(nxt, nxt, acc, "
            "attrs={\"arg_directions\": [\"Input\", \"Input\", \"OutputExisting\"]})\n"
            "            cur_r, other_r, acc_r = pl.yield_(nxt, cur, acc_1)\n"
            "    return acc_r\n");
}

// orch(x, y): `for i, (n,) in pl.range(4, init_values=(0,)): y_1 = self.k(x, x, y); m = n + i; yield m`.
ir::ProgramPtr ScalarLoopProgram() {
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
      std::make_shared<ir::SeqStmts>(std::move(body)), std::vector<ir::VarPtr>{n_r}, ir::ForKind::Sequential,
      ir::Span{"k.py", 3, 5});
  auto entry = std::make_shared<ir::Function>(
      "orch", std::vector<ir::VarPtr>{x, y},
      std::vector<ir::ParamDirection>{ir::ParamDirection::In, ir::ParamDirection::Out}, std::vector<ir::TypePtr>{},
      std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{loop}), ir::FunctionType::Orchestration);
  return std::make_shared<ir::Program>("p", std::vector<ir::FunctionPtr>{kernel, entry}, "orch");
}

TEST(ClassifyIterArgCarry, AScalarIsAScalarCarry) {
  auto program = RunOk({DeriveCallDirections(), MaterializeRuntimeScopes(), ClassifyIterArgCarry()},
                       ScalarLoopProgram());
  ASSERT_TRUE(program);
  EXPECT_EQ(ir::PrintFunction(*program->Find("orch")),
            "@pl.function(type=pl.FunctionType.Orchestration)\n"
            "def orch(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):\n"
            "    with pl.scope():\n"
            "        for i, (n,) in pl.range(4, init_values=(0,), carry=(\"scalar\",)):\n"
            "            with pl.scope():\n"
            "                y_1: pl.Tensor[[16, 16], pl.FP32] = self.k(x, x, y, attrs={\"arg_directions\": "
            "[\"Input\", \"Input\", \"OutputExisting\"]})\n"
            "                m: pl.Scalar[pl.INDEX] = n + i\n"
            "            n_r: pl.Scalar[pl.INDEX] = pl.yield_(m)\n");
  // A second run stamps the same kinds.
  auto again = RunOk({ClassifyIterArgCarry()}, program);
  ASSERT_TRUE(again);
  EXPECT_EQ(ir::PrintProgram(*again), ir::PrintProgram(*program));
}

TEST(IterArgCarryClassified, VerifierRejectsAnUnclassifiedCarry) {
  auto program = RunOk(UpToRuntimeScopes(), testing::RebindingLoopProgram());
  ASSERT_TRUE(program);
  auto holds = VerifyProperty(IRProperty::IterArgCarryClassified, *program);
  ASSERT_FALSE(holds);
  EXPECT_EQ(holds.error().message,
            "property IterArgCarryClassified does not hold in function 'rebind': loop 'i' carries 'cur' "
            "(pl.Tensor[[16, 16], pl.FP32]) as unclassified");
  EXPECT_EQ(holds.error().span.line, 3);
}

}  // namespace
}  // namespace pypto::passes
