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
  ASSERT_EQ(pypto_passes_pipeline_size(), 16u);
  EXPECT_STREQ(pypto_passes_pipeline_pass_name(1), "CtrlFlowTransform");
  EXPECT_STREQ(pypto_passes_pipeline_pass_name(2), "FuseCreateAssembleToSlice");
  EXPECT_STREQ(pypto_passes_pipeline_pass_name(3), "FlattenCallExpr");
  EXPECT_STREQ(pypto_passes_pipeline_pass_name(5), "OutlineIncoreScopes");
  EXPECT_STREQ(pypto_passes_pipeline_pass_name(6), "FlattenTileNdTo2D");
  EXPECT_STREQ(pypto_passes_pipeline_pass_name(15), "ClassifyIterArgCarry");
  EXPECT_EQ(pypto_passes_pipeline_pass_name(99), nullptr);
  EXPECT_STREQ(pypto_passes_version(), PYPTO_VERSION);
}

TEST(PassesCApi, PassContracts) {
  EXPECT_STREQ(pypto_passes_pipeline_pass_required(3), "{}");
  EXPECT_STREQ(pypto_passes_pipeline_pass_produced(3), "{NoNestedCalls}");
  EXPECT_STREQ(pypto_passes_pipeline_pass_required(5), "{SSAForm, StructuredCtrlFlow}");
  EXPECT_STREQ(pypto_passes_pipeline_pass_invalidated(0), "{}");
  EXPECT_EQ(pypto_passes_pipeline_pass_required(99), nullptr);
}

// Lowering step by step through named passes ends where the whole pipeline ends.
TEST(PassesCApi, NamedPassesInTurnEqualThePipeline) {
  pypto_ir_program* program = pypto::c_api::Wrap(pypto::testing::TileAddProgram());
  pypto_ir_program* whole = nullptr;
  ASSERT_EQ(pypto_passes_run(program, "a2a3sim", nullptr, 1, nullptr, &whole), PYPTO_OK) << pypto_last_error_message();
  pypto_ir_program* first = nullptr;
  ASSERT_EQ(pypto_passes_run(program, "a2a3sim", "FlattenCallExpr, SplitMixedScopes,OutlineIncoreScopes", 1, nullptr,
                             &first),
            PYPTO_OK)
      << pypto_last_error_message();
  pypto_ir_program* rest = nullptr;
  ASSERT_EQ(pypto_passes_run(first, "a2a3sim",
                             "InferTileMemorySpace,ExpandMixedKernel,NormalizeReturnOrder,AllocateMemoryAddr,"
                             "DeriveCallDirections,MaterializeRuntimeScopes,ClassifyIterArgCarry",
                             1,
                             nullptr, &rest),
            PYPTO_OK)
      << pypto_last_error_message();
  char* whole_text = nullptr;
  char* rest_text = nullptr;
  ASSERT_EQ(pypto_ir_program_print(whole, &whole_text), PYPTO_OK);
  ASSERT_EQ(pypto_ir_program_print(rest, &rest_text), PYPTO_OK);
  EXPECT_STREQ(rest_text, whole_text);
  pypto_string_free(whole_text);
  pypto_string_free(rest_text);
  for (auto* handle : {program, whole, first, rest}) pypto_ir_program_destroy(handle);
}

TEST(PassesCApi, RunRefusesUnknownPassesAndMissingProperties) {
  pypto_ir_program* program = pypto::c_api::Wrap(pypto::testing::TileAddProgram());
  pypto_ir_program* result = nullptr;
  EXPECT_EQ(pypto_passes_run(program, "a2a3sim", "FlattenCallExpr,Inline", 0, nullptr, &result), PYPTO_ERR_NOT_FOUND);
  EXPECT_STREQ(pypto_last_error_message(),
               "unknown pass 'Inline'; the passes are UnrollLoops, CtrlFlowTransform, FuseCreateAssembleToSlice, "
               "FlattenCallExpr, SplitMixedScopes, OutlineIncoreScopes, FlattenTileNdTo2D, LegalizeTileCast, "
               "InferTileMemorySpace, AutoTileMatmulL0, "
               "ExpandMixedKernel, NormalizeReturnOrder, AllocateMemoryAddr, DeriveCallDirections, "
               "MaterializeRuntimeScopes, ClassifyIterArgCarry");
  // The kernel is still a pl.at scope: nothing has outlined it.
  EXPECT_EQ(pypto_passes_run(program, "a2a3sim", "ExpandMixedKernel", 0, nullptr, &result), PYPTO_ERR_COMPILE);
  EXPECT_NE(std::string(pypto_last_error_message()).find("pass ExpandMixedKernel requires NoInCoreScopes"),
            std::string::npos)
      << pypto_last_error_message();
  EXPECT_EQ(result, nullptr);
  pypto_ir_program_destroy(program);
}

}  // namespace
