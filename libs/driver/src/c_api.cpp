// The driver's C ABI over its C++ pipeline (pypto/driver/pipeline.h).
#include "pypto-c/driver.h"

#include <pybind11/embed.h>

#include <iostream>

#include <fmt/format.h>

#include "pypto-c/frontend.h"
#include "pypto/codegen_orch/kernel_args.h"
#include "pypto/driver/pipeline.h"
#include "pypto/driver/platforms.h"
#include "pypto/ir/c_api_bridge.h"

using namespace pypto;

struct pypto_driver_program {
  driver::CompiledProgramPtr compiled;
};

namespace {

// The status a failure of `stage` returns: a located error of the source is PYPTO_ERR_PARSE while
// parsing and PYPTO_ERR_COMPILE after.
pypto_status StatusOf(const driver::Failure& failure, pypto_status diagnostic_status) {
  switch (failure.kind) {
    case driver::FailureKind::Diagnostic: return diagnostic_status;
    case driver::FailureKind::InvalidArgument: return PYPTO_ERR_NOT_FOUND;
    case driver::FailureKind::DeviceUnavailable:
    case driver::FailureKind::DeviceBuildIncomplete: return PYPTO_ERR_UNAVAILABLE;
    case driver::FailureKind::Runtime: return PYPTO_ERR_RUNTIME;
  }
  return PYPTO_ERR_INTERNAL;
}

pypto_status Fail(const driver::Failure& failure, pypto_status diagnostic_status) {
  return c_api::Fail(StatusOf(failure, diagnostic_status), failure.str());
}

// Parsing a build directory's program needs the interpreter (the frontend reads Python's `ast`).
void EnsureInterpreter() {
  if (!Py_IsInitialized()) pybind11::initialize_interpreter();
}

}  // namespace

extern "C" {

const char* pypto_driver_version(void) { return PYPTO_VERSION; }

pypto_status pypto_driver_compile_program(const pypto_ir_program* parsed, const pypto_driver_options* options,
                                          pypto_driver_program** program) {
  return c_api::Guard([&] {
    if (!parsed || !options || !options->platform || !options->output_dir || !program)
      return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT,
                         "pypto_driver_compile_program: null argument (the program, the options, their platform "
                         "and output_dir, and the result are required)");
    std::optional<std::string> dump_dir;
    if (options->dump_dir) dump_dir = options->dump_dir;
    auto lowered = driver::Lower(parsed->program, options->platform, options->verify != 0, dump_dir);
    if (!lowered) return Fail(lowered.error(), PYPTO_ERR_COMPILE);
    auto compiled = driver::Compile(*lowered, options->platform, options->output_dir,
                                    driver::CompileOptions{.task_window = options->task_window});
    if (!compiled) return Fail(compiled.error(), PYPTO_ERR_COMPILE);
    if (driver::AbiExplanationsRequested()) std::cerr << codegen_orch::ExplainExternArgs(*(*compiled)->lowered);
    *program = new pypto_driver_program{std::move(*compiled)};
    return PYPTO_OK;
  });
}

pypto_status pypto_driver_compile_source(const char* source, const char* filename, const pypto_driver_options* options,
                                         pypto_driver_program** program) {
  return c_api::Guard([&] {
    if (!source || !filename)
      return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "pypto_driver_compile_source: null source or filename");
    pypto_ir_program* parsed = nullptr;
    // The frontend's message and status (PYPTO_ERR_PARSE, located) are this call's.
    if (pypto_status status = pypto_frontend_parse_program(source, filename, 0, &parsed); status != PYPTO_OK)
      return status;
    pypto_status status = pypto_driver_compile_program(parsed, options, program);
    pypto_ir_program_destroy(parsed);
    return status;
  });
}

pypto_status pypto_driver_load(const char* build_dir, const char* platform, pypto_driver_program** program) {
  return c_api::Guard([&] {
    if (!build_dir || !platform || !program)
      return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "pypto_driver_load: null argument");
    EnsureInterpreter();
    pybind11::gil_scoped_acquire gil;
    auto compiled = driver::Load(build_dir, platform);
    if (!compiled) return Fail(compiled.error(), PYPTO_ERR_PARSE);
    *program = new pypto_driver_program{std::move(*compiled)};
    return PYPTO_OK;
  });
}

size_t pypto_driver_param_count(const pypto_driver_program* program) {
  return program ? program->compiled->plan.params.size() : 0;
}

const char* pypto_driver_param_name(const pypto_driver_program* program, size_t index) {
  if (!program || index >= program->compiled->plan.params.size()) return nullptr;
  return program->compiled->plan.params[index].name.c_str();
}

const char* pypto_driver_output_dir(const pypto_driver_program* program) {
  return program ? program->compiled->output_dir.c_str() : nullptr;
}

const char* pypto_driver_platform(const pypto_driver_program* program) {
  return program ? program->compiled->platform.c_str() : nullptr;
}

pypto_status pypto_driver_run(pypto_driver_program* program, const pypto_chip_tensor* args, size_t count) {
  return c_api::Guard([&] {
    if (!program || (!args && count > 0)) return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "pypto_driver_run: null argument");
    auto& compiled = *program->compiled;
    if (count != compiled.plan.params.size())
      return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT,
                         fmt::format("pypto_driver_run: the program takes {} tensors (one per parameter, "
                                     "pypto_driver_param_name names them), {} were passed",
                                     compiled.plan.params.size(), count));
    std::span<const rt::ChipTensor> params(args, count);
    auto ran = driver::Run(compiled, compiled.platform, params);
    if (!ran) return Fail(ran.error(), PYPTO_ERR_RUNTIME);
    return PYPTO_OK;
  });
}

void pypto_driver_program_destroy(pypto_driver_program* program) { delete program; }

char* pypto_driver_platforms_table(void) { return c_api::CopyString(driver::PlatformsTable()); }

void pypto_driver_request_abi_explanations(void) { driver::RequestAbiExplanations(); }

}  // extern "C"
