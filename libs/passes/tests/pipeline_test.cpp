// DefaultPipeline: its passes and their order, the dump callback seeing each of them, and programs
// lowered through a run of its passes end to end: a DAG of vector kernels called from an entry, and
// mixed cube+vector scopes, which end as one AIC and one AIV kernel.
#include <gtest/gtest.h>

#include "mixed_scope_programs.h"
#include "pass_test_util.h"
#include "pypto/ir/printer.h"
#include "pypto/passes/passes.h"
#include "pypto/passes/pipeline.h"
#include "sample_programs.h"

namespace pypto::passes {
namespace {

using ir::FunctionType;
using ir::IsKernel;
using testing::RunOk;
using testing::mixed_scope::KLoopMixedProgram;
using testing::mixed_scope::MixedProgram;
using testing::mixed_scope::StagedProgram;

TEST(DefaultPipeline, PassOrder) {
  std::vector<std::string> names;
  auto pipeline = DefaultPipeline();
  for (const auto& pass : pipeline.passes()) names.push_back(pass.name());
  EXPECT_EQ(names, (std::vector<std::string>{"UnrollLoops", "CtrlFlowTransform", "FuseCreateAssembleToSlice",
                                             "FlattenCallExpr", "SplitMixedScopes", "OutlineIncoreScopes",
                                             "FlattenTileNdTo2D", "LegalizeTileCast", "InferTileMemorySpace", "AutoTileMatmulL0", "ExpandMixedKernel",
                                             "NormalizeReturnOrder", "TransposeScratchTiles", "ScatterMaskBlend",
                                             "AllocateMemoryAddr",
                                             "DeriveCallDirections",
                                             "MaterializeRuntimeScopes", "ClassifyIterArgCarry"}));
}

TEST(DefaultPipeline, DumpCallbackSeesEveryPass) {
  std::vector<std::string> seen;
  PassManagerOptions options{.verify = true, .after_pass = [&](int slot, const std::string& name, const ir::Program&) {
    seen.push_back(std::to_string(slot) + ":" + name);
  }};
  ASSERT_TRUE(Lower(testing::TileAddProgram(), PassContext{}, options));
  EXPECT_EQ(seen, (std::vector<std::string>{"1:UnrollLoops", "2:CtrlFlowTransform", "3:FuseCreateAssembleToSlice",
                                            "4:FlattenCallExpr", "5:SplitMixedScopes", "6:OutlineIncoreScopes",
                                            "7:FlattenTileNdTo2D", "8:LegalizeTileCast", "9:InferTileMemorySpace",
                                            "10:AutoTileMatmulL0", "11:ExpandMixedKernel", "12:NormalizeReturnOrder",
                                            "13:TransposeScratchTiles", "14:ScatterMaskBlend",
                                            "15:AllocateMemoryAddr", "16:DeriveCallDirections",
                                            "17:MaterializeRuntimeScopes", "18:ClassifyIterArgCarry"}));
}

TEST(DefaultPipeline, VectorDagLowers) {
  auto program = RunOk({FlattenCallExpr(), OutlineIncoreScopes(), ExpandMixedKernel(), AllocateMemoryAddr(),
                        DeriveCallDirections()},
                       testing::VectorDagProgram());
  ASSERT_TRUE(program);
  EXPECT_EQ(program->Find("kernel_add")->type(), ir::FunctionType::AIV);
  EXPECT_EQ(program->Find("kernel_add_scalar")->type(), ir::FunctionType::AIV);
  EXPECT_EQ(program->Find("kernel_mul")->type(), ir::FunctionType::AIV);
  // The literals as the printer spells them (the printer's concern, not this pass's).
  const std::string one = ir::PrintExpr(std::make_shared<ir::ConstFloat>(1.0, ir::DataType::FP32));
  const std::string two = ir::PrintExpr(std::make_shared<ir::ConstFloat>(2.0, ir::DataType::FP32));
  EXPECT_EQ(
      ir::PrintFunction(*program->Find("vector_dag")),
      std::string("@pl.function(type=pl.FunctionType.Orchestration)\n") +
      "def vector_dag(self, a: pl.Tensor[[128, 128], pl.FP32], b: pl.Tensor[[128, 128], pl.FP32], "
      "f: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:\n"
      "    c: pl.Tensor[[128, 128], pl.FP32] = pl.tensor.create([128, 128], dtype=pl.FP32)\n"
      "    c_1: pl.Tensor[[128, 128], pl.FP32] = self.kernel_add(a, b, c, attrs={\"arg_directions\": [\"Input\", "
      "\"Input\", \"OutputExisting\"]})\n"
      "    d: pl.Tensor[[128, 128], pl.FP32] = pl.tensor.create([128, 128], dtype=pl.FP32)\n"
      "    d_1: pl.Tensor[[128, 128], pl.FP32] = self.kernel_add_scalar(c_1, " + one + ", d, attrs={\"arg_directions\": "
      "[\"Input\", \"Scalar\", \"OutputExisting\"]})\n"
      "    e: pl.Tensor[[128, 128], pl.FP32] = pl.tensor.create([128, 128], dtype=pl.FP32)\n"
      "    e_1: pl.Tensor[[128, 128], pl.FP32] = self.kernel_add_scalar(c_1, " + two + ", e, attrs={\"arg_directions\": "
      "[\"Input\", \"Scalar\", \"OutputExisting\"]})\n"
      "    g: pl.Tensor[[128, 128], pl.FP32] = pl.tensor.create([128, 128], dtype=pl.FP32)\n"
      "    g_1: pl.Tensor[[128, 128], pl.FP32] = self.kernel_mul(d_1, e_1, g, attrs={\"arg_directions\": [\"Input\", "
      "\"Input\", \"OutputExisting\"]})\n"
      "    f_1: pl.Tensor[[128, 128], pl.FP32] = self.kernel_add(g_1, c_1, f, attrs={\"arg_directions\": [\"Input\", "
      "\"Input\", \"OutputExisting\"]})\n"
      "    return f_1\n");
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
