#include "pypto-c/backend_ptoas.h"

#include <gtest/gtest.h>

#include "kernel_builder.h"
#include "pypto/backend_ptoas/kernel_wrapper.h"
#include "pypto/backend_ptoas/module.h"
#include "pypto/ir/c_api_bridge.h"

namespace {

using namespace pypto;
using namespace pypto::backend_ptoas::testing;

// Owns a program handle for one test.
struct Handle {
  explicit Handle(ir::ProgramPtr program) : ptr(c_api::Wrap(std::move(program))) {}
  ~Handle() { pypto_ir_program_destroy(ptr); }
  pypto_ir_program* ptr;
};

std::string Take(char* text) {
  std::string copy = text ? text : "";
  pypto_string_free(text);
  return copy;
}

TEST(PtoasCApi, Version) { EXPECT_STREQ(pypto_ptoas_version(), PYPTO_VERSION); }

TEST(PtoasCApi, EmitModuleMatchesTheCppApi) {
  auto kernel = VectorAddKernel();
  Handle program(ProgramOf(kernel));
  char* text = nullptr;
  ASSERT_EQ(pypto_ptoas_emit_module(program.ptr, "vector_add", "a5", &text), PYPTO_OK) << pypto_last_error_message();
  EXPECT_EQ(Take(text), *backend_ptoas::EmitModule(*kernel, "a5"));
}

TEST(PtoasCApi, EmitModuleGenericMatchesTheCppApi) {
  auto kernel = VectorAddKernel();
  Handle program(ProgramOf(kernel));
  char* text = nullptr;
  ASSERT_EQ(pypto_ptoas_emit_module_generic(program.ptr, "vector_add", "a5", &text), PYPTO_OK)
      << pypto_last_error_message();
  std::string generic = Take(text);
  EXPECT_EQ(generic, *backend_ptoas::EmitModule(*kernel, "a5", {.generic_form = true}));
  EXPECT_NE(generic.find("\"pto.tadd\"(%tile_a, %tile_b, %tile_c)"), std::string::npos) << generic;
}

TEST(PtoasCApi, EmitModuleGenericErrorsNameIt) {
  Handle program(ProgramOf(VectorAddKernel()));
  char* text = nullptr;
  EXPECT_EQ(pypto_ptoas_emit_module_generic(program.ptr, "missing", "a2a3", &text), PYPTO_ERR_NOT_FOUND);
  EXPECT_STREQ(pypto_last_error_message(),
               "pypto_ptoas_emit_module_generic: no function 'missing' in program '_jit_vector_add'");
  EXPECT_EQ(pypto_ptoas_emit_module_generic(program.ptr, "vector_add", "a3", &text), PYPTO_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(pypto_ptoas_emit_module_generic(nullptr, "vector_add", "a2a3", &text), PYPTO_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(pypto_last_error_message(), "pypto_ptoas_emit_module_generic: null argument");
  EXPECT_EQ(text, nullptr);
}

TEST(PtoasCApi, UnknownFunctionIsNotFound) {
  Handle program(ProgramOf(VectorAddKernel()));
  char* text = nullptr;
  EXPECT_EQ(pypto_ptoas_emit_module(program.ptr, "missing", "a2a3", &text), PYPTO_ERR_NOT_FOUND);
  EXPECT_STREQ(pypto_last_error_message(),
               "pypto_ptoas_emit_module: no function 'missing' in program '_jit_vector_add'");
  EXPECT_EQ(text, nullptr);
}

TEST(PtoasCApi, UnknownArchIsInvalid) {
  Handle program(ProgramOf(VectorAddKernel()));
  char* text = nullptr;
  EXPECT_EQ(pypto_ptoas_emit_module(program.ptr, "vector_add", "a3", &text), PYPTO_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(pypto_last_error_message(),
               "pypto_ptoas_emit_module: unknown target arch 'a3' (expected \"a2a3\" or \"a5\")");
}

TEST(PtoasCApi, LoweringFailureIsACompileError) {
  Handle program(ProgramOf(Kernel("opaque", {}, {}, {}, ir::FunctionType::Opaque)));
  char* text = nullptr;
  EXPECT_EQ(pypto_ptoas_emit_module(program.ptr, "opaque", "a2a3", &text), PYPTO_ERR_COMPILE);
  EXPECT_STREQ(pypto_last_error_message(),
               "k.py:1:1: kernel 'opaque' has type Opaque; backend-ptoas emits only AIV and AIC kernels");
}

TEST(PtoasCApi, NullArguments) {
  char* text = nullptr;
  EXPECT_EQ(pypto_ptoas_emit_module(nullptr, "k", "a2a3", &text), PYPTO_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(pypto_last_error_message(), "pypto_ptoas_emit_module: null argument");
  EXPECT_EQ(pypto_ptoas_emit_kernel_wrapper(nullptr, "k", nullptr, &text), PYPTO_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(pypto_last_error_message(), "pypto_ptoas_emit_kernel_wrapper: null argument");
}

TEST(PtoasCApi, EmitKernelWrapper) {
  auto kernel = VectorAddKernel();
  Handle program(ProgramOf(kernel));
  const char* ptoas = "AICORE void vector_add(__gm__ float* a, __gm__ float* b, __gm__ float* c) {}\n";
  char* text = nullptr;
  ASSERT_EQ(pypto_ptoas_emit_kernel_wrapper(program.ptr, "vector_add", ptoas, &text), PYPTO_OK)
      << pypto_last_error_message();
  EXPECT_EQ(Take(text), *backend_ptoas::EmitKernelWrapper(*kernel, ptoas));
}

}  // namespace
