#include <gtest/gtest.h>

#include "pypto-c/ir.h"
#include "pypto/ir/c_api_bridge.h"
#include "sample_programs.h"

namespace {

TEST(IrCApi, PrintsAndInspectsAProgram) {
  pypto_ir_program* program = pypto::c_api::Wrap(pypto::testing::TileAddProgram());
  ASSERT_EQ(pypto_ir_program_function_count(program), 1u);
  const char* name = nullptr;
  int type = -1;
  ASSERT_EQ(pypto_ir_program_function_info(program, 0, &name, &type), PYPTO_OK);
  EXPECT_STREQ(name, "tile_add");
  EXPECT_EQ(type, 0);  // pl.FunctionType.Opaque
  char* text = nullptr;
  ASSERT_EQ(pypto_ir_program_print(program, &text), PYPTO_OK);
  EXPECT_EQ(std::string(text).rfind("@pl.program\nclass _jit_tile_add:\n", 0), 0u);
  pypto_string_free(text);
  EXPECT_EQ(pypto_ir_program_function_info(program, 5, &name, &type), PYPTO_ERR_NOT_FOUND);
  EXPECT_STREQ(pypto_last_error_message(), "pypto_ir_program_function_info: index out of range");
  pypto_ir_program_destroy(program);
}

TEST(IrCApi, NullArgumentsAreRefusedNotCrashed) {
  char* text = nullptr;
  EXPECT_EQ(pypto_ir_program_print(nullptr, &text), PYPTO_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(pypto_last_error_message(), "pypto_ir_program_print: null argument");
  EXPECT_EQ(pypto_ir_program_function_count(nullptr), 0u);
}

TEST(IrCApi, OpRegistryAndVersion) {
  int exists = 0;
  ASSERT_EQ(pypto_ir_op_exists("tile.add", &exists), PYPTO_OK);
  EXPECT_EQ(exists, 1);
  ASSERT_EQ(pypto_ir_op_exists("tile.frobnicate", &exists), PYPTO_OK);
  EXPECT_EQ(exists, 0);
  EXPECT_STREQ(pypto_ir_version(), PYPTO_VERSION);
}

}  // namespace
