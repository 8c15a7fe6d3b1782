// An orchestration that launches a hand-written AIV kernel on 4 blocks (`with pl.spmd(core_num=4):`):
// one submit of 4 blocks in the C++ and the plan, and a manifest entry naming the original source.
// With `sync_start=True` the launch spec requires the blocks to start together.
#include <gtest/gtest.h>

#include "pypto/codegen_orch/orchestration.h"
#include "pypto/passes/pipeline.h"
#include "sample_programs.h"

namespace pypto::codegen_orch {
namespace {

using testing::Scalar;
using testing::Tensor;

constexpr const char* kSource = "/kernels/aiv/spmd_write.cpp";

ir::ProgramPtr SpmdExternProgram(bool sync_start = false, int64_t blocks = 4) {
  auto out = Tensor("out", {80});
  auto base = Scalar("base_cl", ir::DataType::INDEX);
  auto kernel = std::make_shared<ir::Function>(
      "SPMD_WRITE_AIV", std::vector<ir::VarPtr>{out, base},
      std::vector<ir::ParamDirection>{ir::ParamDirection::InOut, ir::ParamDirection::In},
      std::vector<ir::TypePtr>{out->type()}, std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{}),
      ir::FunctionType::AIV, std::map<std::string, ir::AttrValue>{{"external_source", std::string(kSource)}});

  auto main_out = Tensor("out", {80});
  auto call = std::make_shared<ir::Call>(
      "SPMD_WRITE_AIV",
      std::vector<ir::ExprPtr>{main_out, std::make_shared<ir::ConstInt>(0, ir::DataType::INDEX)}, out->type(),
      ir::Span{"k.py", 9, 19}, std::vector<ir::ArgDirection>{},
      sync_start ? ir::Call::Kwargs{{"sync_start", true}} : ir::Call::Kwargs{}, ir::LaunchOrder{},
      std::make_shared<ir::ConstInt>(blocks, ir::DataType::INDEX));
  auto result = testing::Local("out_1", call);
  auto body = std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{
      testing::Assign(result, call), std::make_shared<ir::ReturnStmt>(std::vector<ir::ExprPtr>{result})});
  auto main = std::make_shared<ir::Function>("main", std::vector<ir::VarPtr>{main_out},
                                             std::vector<ir::ParamDirection>{ir::ParamDirection::Out},
                                             std::vector<ir::TypePtr>{main_out->type()}, body,
                                             ir::FunctionType::Orchestration);
  return std::make_shared<ir::Program>("SpmdWrite", std::vector<ir::FunctionPtr>{kernel, main}, "main");
}

ir::Result<Orchestration> Generate(bool sync_start = false, int64_t blocks = 4) {
  auto lowered = passes::Lower(SpmdExternProgram(sync_start, blocks), passes::PassContext{});
  if (!lowered) return pypto::unexpected(lowered.error());
  return GenerateOrchestration(**lowered);
}

TEST(SpmdExtern, OneSubmitOfFourBlocks) {
  auto orchestration = Generate();
  ASSERT_TRUE(orchestration) << orchestration.error().str();
  ASSERT_EQ(orchestration->plan.submits.size(), 1u);
  const auto& submit = orchestration->plan.submits[0];
  EXPECT_EQ(submit.block_num, 4);
  EXPECT_FALSE(submit.require_sync_start);
  EXPECT_EQ(submit.core_type, rt::CoreType::AIV);
  ASSERT_EQ(submit.args.size(), 2u);
  EXPECT_EQ(submit.args[0].direction, rt::ArgDirection::InOut);
  EXPECT_EQ(submit.args[1].direction, rt::ArgDirection::Scalar);
  const std::string& cpp = orchestration->cpp_source;
  EXPECT_NE(cpp.find("    params_t0.launch_spec.set_block_num(4);\n    rt_submit_aiv_task(0, params_t0);\n"),
            std::string::npos)
      << cpp;
}

TEST(SpmdExtern, SyncStartIsSetOnTheLaunchSpec) {
  auto orchestration = Generate(/*sync_start=*/true);
  ASSERT_TRUE(orchestration) << orchestration.error().str();
  ASSERT_EQ(orchestration->plan.submits.size(), 1u);
  EXPECT_EQ(orchestration->plan.submits[0].block_num, 4);
  EXPECT_TRUE(orchestration->plan.submits[0].require_sync_start);
  const std::string& cpp = orchestration->cpp_source;
  EXPECT_NE(cpp.find("    params_t0.launch_spec.set_block_num(4);\n"
                     "    params_t0.launch_spec.set_require_sync_start(true);\n"
                     "    rt_submit_aiv_task(0, params_t0);\n"),
            std::string::npos)
      << cpp;
}

TEST(SpmdExtern, NoBlocksSubmitNothing) {
  // `with pl.spmd(core_num=0):`, as a count computed from known values can fold to.
  auto orchestration = Generate(/*sync_start=*/false, /*blocks=*/0);
  ASSERT_TRUE(orchestration) << orchestration.error().str();
  EXPECT_TRUE(orchestration->plan.submits.empty());
  const std::string& cpp = orchestration->cpp_source;
  EXPECT_NE(cpp.find("  PTO2_SCOPE() {\n"
                     "    // 'SPMD_WRITE_AIV' is launched on 0 blocks: nothing to submit\n"
                     "  }\n"),
            std::string::npos)
      << cpp;
}

TEST(SpmdExtern, ManifestNamesTheOriginalSource) {
  auto orchestration = Generate();
  ASSERT_TRUE(orchestration) << orchestration.error().str();
  ASSERT_EQ(orchestration->kernels.size(), 1u);
  EXPECT_EQ(orchestration->kernels[0].external_source, kSource);
  const std::string config = KernelConfigPy(*orchestration, "/build", ".pto");
  EXPECT_NE(config.find("{\"func_id\": 0, \"name\": \"SPMD_WRITE_AIV\", \"source\": \"/kernels/aiv/spmd_write.cpp\", "
                        "\"core_type\": \"aiv\", \"signature\": [_D.INOUT], \"external\": True}"),
            std::string::npos)
      << config;
}

}  // namespace
}  // namespace pypto::codegen_orch
