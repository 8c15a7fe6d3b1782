#include <gtest/gtest.h>

#include <string>

#include "pypto-c/passes.h"
#include "pypto/ir/c_api_bridge.h"
#include "sample_programs.h"

namespace {

TEST(PassesCApi, LowersThroughOpaqueHandles) {
  pypto_ir_program* program = pypto::c_api::Wrap(pypto::testing::TileAddProgram());
  pypto_ir_program* lowered = nullptr;
  ASSERT_EQ(pypto_passes_lower(program, "a2a3sim", 1, &lowered), PYPTO_OK) << pypto_last_error_message();
  ASSERT_EQ(pypto_ir_program_function_count(lowered), 2u);
  const char* name = nullptr;
  int type = -1;
  ASSERT_EQ(pypto_ir_program_function_info(lowered, 0, &name, &type), PYPTO_OK);
  EXPECT_STREQ(name, "tile_add_incore_0");
  EXPECT_EQ(type, 4);  // pl.FunctionType.AIV
  pypto_ir_program_destroy(lowered);
  pypto_ir_program_destroy(program);
}

TEST(PassesCApi, UnknownPlatformIsNotFound) {
  pypto_ir_program* program = pypto::c_api::Wrap(pypto::testing::TileAddProgram());
  pypto_ir_program* lowered = nullptr;
  EXPECT_EQ(pypto_passes_lower(program, "tpu", 0, &lowered), PYPTO_ERR_NOT_FOUND);
  EXPECT_STREQ(pypto_last_error_message(), "unknown platform 'tpu'");
  EXPECT_EQ(pypto_passes_lower(nullptr, "a2a3sim", 0, &lowered), PYPTO_ERR_INVALID_ARGUMENT);
  pypto_ir_program_destroy(program);
}

TEST(PassesCApi, PipelineNames) {
  ASSERT_EQ(pypto_passes_pipeline_size(), 7u);
  EXPECT_STREQ(pypto_passes_pipeline_pass_name(1), "SplitMixedScopes");
  EXPECT_STREQ(pypto_passes_pipeline_pass_name(2), "OutlineIncoreScopes");
  EXPECT_EQ(pypto_passes_pipeline_pass_name(99), nullptr);
  EXPECT_STREQ(pypto_passes_version(), PYPTO_VERSION);
}

}  // namespace
