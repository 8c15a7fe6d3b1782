// libpypto_backend_ptoas's C ABI: thin wrappers that turn expected<> errors into statuses.
#include "pypto-c/backend_ptoas.h"

#include <fmt/format.h>

#include "pypto/backend_ptoas/kernel_wrapper.h"
#include "pypto/backend_ptoas/module.h"
#include "pypto/ir/c_api_bridge.h"

using namespace pypto;

namespace {

// Finds the kernel or records why not; null on failure.
ir::FunctionPtr FindKernel(const pypto_ir_program* program, const char* function_name, const char* caller,
                           pypto_status* status) {
  if (!program || !program->program || !function_name) {
    *status = c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, fmt::format("{}: null argument", caller));
    return nullptr;
  }
  auto function = program->program->Find(function_name);
  if (!function) {
    *status = c_api::Fail(PYPTO_ERR_NOT_FOUND, fmt::format("{}: no function '{}' in program '{}'", caller,
                                                           function_name, program->program->name()));
  }
  return function;
}

// pypto_ptoas_emit_module and its generic-form twin, which differ in their options and their name.
pypto_status EmitModuleWith(const pypto_ir_program* program, const char* function_name, const char* arch,
                            char** out_text, const backend_ptoas::ModuleOptions& options, const char* caller) {
  return c_api::Guard([&] {
    if (!arch || !out_text) return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, fmt::format("{}: null argument", caller));
    pypto_status status = PYPTO_OK;
    auto kernel = FindKernel(program, function_name, caller, &status);
    if (!kernel) return status;
    if (!backend_ptoas::IsTargetArch(arch)) {
      return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT,
                         fmt::format("{}: unknown target arch '{}' (expected \"a2a3\" or \"a5\")", caller, arch));
    }
    auto text = backend_ptoas::EmitModule(*kernel, arch, options);
    if (!text) return c_api::Fail(PYPTO_ERR_COMPILE, text.error());
    *out_text = c_api::CopyString(*text);
    return PYPTO_OK;
  });
}

}  // namespace

extern "C" {

const char* pypto_ptoas_version(void) { return PYPTO_VERSION; }

pypto_status pypto_ptoas_emit_module(const pypto_ir_program* program, const char* function_name, const char* arch,
                                     char** out_text) {
  return EmitModuleWith(program, function_name, arch, out_text, {}, "pypto_ptoas_emit_module");
}

pypto_status pypto_ptoas_emit_module_generic(const pypto_ir_program* program, const char* function_name,
                                             const char* arch, char** out_text) {
  return EmitModuleWith(program, function_name, arch, out_text, {.generic_form = true},
                        "pypto_ptoas_emit_module_generic");
}

pypto_status pypto_ptoas_emit_kernel_wrapper(const pypto_ir_program* program, const char* function_name,
                                             const char* ptoas_cpp, char** out_text) {
  return c_api::Guard([&] {
    constexpr const char* kCaller = "pypto_ptoas_emit_kernel_wrapper";
    if (!out_text) return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, fmt::format("{}: null argument", kCaller));
    pypto_status status = PYPTO_OK;
    auto kernel = FindKernel(program, function_name, kCaller, &status);
    if (!kernel) return status;
    auto text = backend_ptoas::EmitKernelWrapper(*kernel, ptoas_cpp ? ptoas_cpp : "");
    if (!text) return c_api::Fail(PYPTO_ERR_COMPILE, text.error());
    *out_text = c_api::CopyString(*text);
    return PYPTO_OK;
  });
}

}  // extern "C"
