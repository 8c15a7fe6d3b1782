#include <gtest/gtest.h>

#include <string>

#include "pypto-c/passes.h"
#include "pypto/ir/c_api_bridge.h"
#include "sample_programs.h"

namespace {

// What a platform's description names for the A2/A3 SoC.
const pypto_soc_desc kAscend910B{.table = "Ascend910B"};

TEST(PassesCApi, LowersThroughOpaqueHandles) {
  pypto_ir_program* program = pypto::c_api::Wrap(pypto::testing::TileAddProgram());
  pypto_ir_program* lowered = nullptr;
  ASSERT_EQ(pypto_passes_lower(program, &kAscend910B, 1, &lowered), PYPTO_OK) << pypto_last_error_message();
  ASSERT_EQ(pypto_ir_program_function_count(lowered), 2u);
  const char* name = nullptr;
  int type = -1;
  ASSERT_EQ(pypto_ir_program_function_info(lowered, 0, &name, &type), PYPTO_OK);
  EXPECT_STREQ(name, "tile_add_incore_0");
  EXPECT_EQ(type, 4);  // pl.FunctionType.AIV
  pypto_ir_program_destroy(lowered);
  pypto_ir_program_destroy(program);
}

TEST(PassesCApi, ABadSocDescriptionIsAnInvalidArgument) {
  pypto_ir_program* program = pypto::c_api::Wrap(pypto::testing::TileAddProgram());
  pypto_ir_program* lowered = nullptr;
  const pypto_soc_desc tpu{.table = "TPUv4"};
  EXPECT_EQ(pypto_passes_lower(program, &tpu, 0, &lowered), PYPTO_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(pypto_last_error_message(),
               "pypto_passes_lower: the SoC description names SoC table 'TPUv4', which is not one of libs/ir's "
               "(Ascend910B, Ascend950)");
  EXPECT_EQ(pypto_passes_lower(nullptr, &kAscend910B, 0, &lowered), PYPTO_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(pypto_passes_lower(program, nullptr, 0, &lowered), PYPTO_ERR_INVALID_ARGUMENT);
  pypto_ir_program_destroy(program);
}

// A SoC spelled out field by field, as a plugin for a new chip describes it, lowers like a table.
TEST(PassesCApi, ASpelledOutSocLowers) {
  pypto_ir_program* program = pypto::c_api::Wrap(pypto::testing::TileAddProgram());
  const pypto_soc_desc chip{.name = "MyChip", .arch = "a2a3", .aic_cores = 4, .aiv_cores = 8, .ub_bytes = 192 << 10,
                            .l1_bytes = 512 << 10, .l0a_bytes = 64 << 10, .l0b_bytes = 64 << 10,
                            .l0c_bytes = 128 << 10, .bias_bytes = 1 << 10, .alignment = 32};
  pypto_ir_program* lowered = nullptr;
  ASSERT_EQ(pypto_passes_lower(program, &chip, 1, &lowered), PYPTO_OK) << pypto_last_error_message();
  EXPECT_EQ(pypto_ir_program_function_count(lowered), 2u);
  pypto_ir_program_destroy(lowered);
  pypto_ir_program_destroy(program);
}

TEST(PassesCApi, PipelineNames) {
  ASSERT_EQ(pypto_passes_pipeline_size(), 18u);
  EXPECT_STREQ(pypto_passes_pipeline_pass_name(1), "CtrlFlowTransform");
  EXPECT_STREQ(pypto_passes_pipeline_pass_name(2), "FuseCreateAssembleToSlice");
  EXPECT_STREQ(pypto_passes_pipeline_pass_name(3), "FlattenCallExpr");
  EXPECT_STREQ(pypto_passes_pipeline_pass_name(5), "OutlineIncoreScopes");
  EXPECT_STREQ(pypto_passes_pipeline_pass_name(6), "FlattenTileNdTo2D");
  EXPECT_STREQ(pypto_passes_pipeline_pass_name(12), "TransposeScratchTiles");
  EXPECT_STREQ(pypto_passes_pipeline_pass_name(13), "ScatterMaskBlend");
  EXPECT_STREQ(pypto_passes_pipeline_pass_name(17), "ClassifyIterArgCarry");
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
  ASSERT_EQ(pypto_passes_run(program, &kAscend910B, nullptr, 1, nullptr, &whole), PYPTO_OK) << pypto_last_error_message();
  pypto_ir_program* first = nullptr;
  ASSERT_EQ(pypto_passes_run(program, &kAscend910B, "FlattenCallExpr, SplitMixedScopes,OutlineIncoreScopes", 1, nullptr,
                             &first),
            PYPTO_OK)
      << pypto_last_error_message();
  pypto_ir_program* rest = nullptr;
  ASSERT_EQ(pypto_passes_run(first, &kAscend910B,
                             "InferTileMemorySpace,ExpandMixedKernel,NormalizeReturnOrder,TransposeScratchTiles,ScatterMaskBlend,"
                             "AllocateMemoryAddr,"
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
  EXPECT_EQ(pypto_passes_run(program, &kAscend910B, "FlattenCallExpr,Inline", 0, nullptr, &result), PYPTO_ERR_NOT_FOUND);
  EXPECT_STREQ(pypto_last_error_message(),
               "unknown pass 'Inline'; the passes are UnrollLoops, CtrlFlowTransform, FuseCreateAssembleToSlice, "
               "FlattenCallExpr, SplitMixedScopes, OutlineIncoreScopes, FlattenTileNdTo2D, LegalizeTileCast, "
               "InferTileMemorySpace, AutoTileMatmulL0, "
               "ExpandMixedKernel, NormalizeReturnOrder, TransposeScratchTiles, ScatterMaskBlend, AllocateMemoryAddr, "
               "DeriveCallDirections, "
               "MaterializeRuntimeScopes, ClassifyIterArgCarry");
  // The kernel is still a pl.at scope: nothing has outlined it.
  EXPECT_EQ(pypto_passes_run(program, &kAscend910B, "ExpandMixedKernel", 0, nullptr, &result), PYPTO_ERR_COMPILE);
  EXPECT_NE(std::string(pypto_last_error_message()).find("pass ExpandMixedKernel requires NoInCoreScopes"),
            std::string::npos)
      << pypto_last_error_message();
  EXPECT_EQ(result, nullptr);
  pypto_ir_program_destroy(program);
}

}  // namespace
