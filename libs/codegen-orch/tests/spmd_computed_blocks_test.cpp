// A pl.spmd launch whose block count the orchestration computes (sample_programs.h's
// SpmdComputedBlocksProgram, `n = i * scale - shift` in a loop): the plan evaluates it at every
// submit, launching nothing for 0 blocks and refusing a negative count; the C++ computes it before
// the submit and skips the submit for 0.
#include <gtest/gtest.h>

#include <vector>

#include "pypto/codegen_orch/orchestration.h"
#include "pypto/passes/pipeline.h"
#include "sample_programs.h"

namespace pypto::codegen_orch {
namespace {

ir::Result<Orchestration> Generate(int64_t scale, int64_t shift) {
  auto lowered = passes::Lower(testing::SpmdComputedBlocksProgram(scale, shift), passes::PassContext{},
                               passes::PassManagerOptions{.verify = true});
  if (!lowered) return pypto::unexpected(lowered.error());
  return GenerateOrchestration(**lowered);
}

TEST(SpmdComputedBlocks, PlanLaunchesEachIterationsCountAndSkipsZero) {
  auto orchestration = Generate(/*scale=*/2, /*shift=*/0);  // n = 0, 2, 4
  ASSERT_TRUE(orchestration) << orchestration.error().str();
  const auto& submits = orchestration->plan.submits;
  ASSERT_EQ(submits.size(), 5u);  // i = 0 runs only `scale`
  const int32_t fill = submits[1].func_id, scale = submits[0].func_id;
  EXPECT_NE(fill, scale);
  std::vector<std::pair<int32_t, int32_t>> launched;  // (func_id, blocks)
  for (const auto& submit : submits) launched.emplace_back(submit.func_id, submit.block_num);
  EXPECT_EQ(launched,
            (std::vector<std::pair<int32_t, int32_t>>{{scale, 1}, {fill, 2}, {scale, 1}, {fill, 4}, {scale, 1}}));
  // `scale` waits for the launch `tid` names; with no launch in i = 0 the TaskId is invalid.
  EXPECT_TRUE(submits[0].deps.empty());
  EXPECT_EQ(submits[2].deps, (std::vector<uint32_t>{1}));
  EXPECT_EQ(submits[4].deps, (std::vector<uint32_t>{3}));
}

TEST(SpmdComputedBlocks, CppComputesTheCountAndSkipsAZeroLaunch) {
  auto orchestration = Generate(/*scale=*/2, /*shift=*/0);
  ASSERT_TRUE(orchestration) << orchestration.error().str();
  EXPECT_NE(orchestration->cpp_source.find("    for (int64_t i = 0; i < 3; i += 1) {\n"
                                           "      PTO2_SCOPE() {\n"
                                           "        int64_t n = (i * 2);\n"
                                           "        PTO2TaskId tid = PTO2TaskId::invalid();\n"
                                           "        if (n != 0) {\n"
                                           "          CoreTaskArgs params_t0;\n"
                                           "          params_t0.add_input(ext_x);\n"
                                           "          params_t0.add_output(ext_y);\n"
                                           "          params_t0.launch_spec.set_block_num(n);\n"
                                           "          tid = rt_submit_aiv_task(0, params_t0).task_id();\n"
                                           "        }\n"
                                           "\n"
                                           "        CoreTaskArgs params_t1;\n"),
            std::string::npos)
      << orchestration->cpp_source;
}

TEST(SpmdComputedBlocks, NegativeCountNamesTheLaunchAndTheIteration) {
  auto result = Generate(/*scale=*/1, /*shift=*/1);  // n = -1 when i = 0
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message,
            "the pl.spmd launch of 'fill' has -1 blocks (when i = 0); a block count must be at least 0");
  EXPECT_EQ(result.error().span.file, "k.py");
  EXPECT_EQ(result.error().span.line, 5);
}

}  // namespace
}  // namespace pypto::codegen_orch
