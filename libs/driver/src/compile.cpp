#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "build_directory.h"
#include "dfx.h"
#include "plugin_for.h"
#include "pypto/backend_ptoas/module.h"
#include "pypto/codegen_orch/orchestration.h"
#include "pypto/driver/pipeline.h"
#include "pypto/ir/c_api_bridge.h"
#include "pypto/ir/printer.h"
#include "pypto/runtime/c_api_bridge.h"
#include "pypto/runtime/plan_checks.h"

namespace pypto::driver {

namespace {

// A kernel reading an intermediate that nothing writes reads undefined memory on the device (seed
// 001: bytes a kernel never wrote are undefined), while the simulator's buffers start zeroed; say so
// where the program was compiled, naming the tensor and its first reader.
void WarnOnUnwrittenIntermediates(const rt::TaskPlan& plan, const WarningSink& warn) {
  for (const auto& read : rt::FindUnwrittenIntermediateReads(plan)) {
    warn(fmt::format(
        "kernel '{}' takes the intermediate tensor '{}' as an input, but no task of the program writes it: "
        "on the device whatever the kernel reads of it is what its memory held before (the simulator reads "
        "zeros); write it first, or create it with pl.create_tensor(..., init_value=0)",
        read.kernel, read.tensor));
  }
}

// kernels/<aic|aiv>/<kernel>.pto: the PTO-ISA module of each kernel, what ptoas assembles (for a
// member of a mixed kernel whose members pass tiles through cross-core pipes, the module of both
// members, written under each member's name), and next to it <kernel>.generic.mlir, the same
// module with its pto ops in MLIR's generic form, which any MLIR tool parses (`mlir-opt
// --allow-unregistered-dialect`) without ptoas. The simulator runs the IR itself, so there a kernel
// the emitter cannot express yet is a warning; for a device it is an error. The platform's
// description says which (pto_modules), or that no module is written.
Result<bool> WriteKernelModules(const ir::Program& lowered, const codegen_orch::Orchestration& orchestration,
                                const rt::PlatformInfo& info, const std::filesystem::path& root,
                                const WarningSink& warn) {
  if (info.pto_modules == PYPTO_PTO_NONE) return true;
  for (const auto& kernel : orchestration.kernels) {
    if (!kernel.external_source.empty()) continue;  // hand-written: the manifest names its source
    const ir::Function& function = *lowered.Find(kernel.name);
    const std::string& arch = info.soc.arch;
    auto module = backend_ptoas::EmitKernelModule(lowered, function, arch);
    if (!module && info.pto_modules == PYPTO_PTO_OPTIONAL) {
      warn(fmt::format("no .pto written for kernel '{}': {}", kernel.name, module.error()));
      continue;
    }
    if (!module) return Fail(FailureKind::Runtime, module.error());
    // Planning does not depend on the form: a kernel with a .pto has a generic module too.
    auto generic = backend_ptoas::EmitKernelModule(lowered, function, arch, {.generic_form = true});
    if (!generic) return Fail(FailureKind::Runtime, generic.error());
    auto dir = root / "kernels" / kernel.core_type;
    std::filesystem::create_directories(dir);
    std::ofstream(dir / (kernel.name + ".pto")) << *module;
    std::ofstream(dir / (kernel.name + ".generic.mlir")) << *generic;
  }
  return true;
}

}  // namespace

Result<CompiledProgramPtr> Compile(const ir::ProgramPtr& lowered, const std::string& platform,
                                   const std::string& output_dir, CompileOptions options) {
  const WarningSink warn = options.warn ? options.warn : [](const std::string& message) { spdlog::warn("{}", message); };
  auto generated = codegen_orch::GenerateOrchestration(*lowered);
  if (!generated) return Fail(std::move(generated.error()));
  auto& orchestration = *generated;
  WarnOnUnwrittenIntermediates(orchestration.plan, warn);
  orchestration.plan.task_window = options.task_window;
  orchestration.plan.ring_heap = std::move(options.ring_heap);
  orchestration.plan.ring_dep_pool = std::move(options.ring_dep_pool);
  orchestration.plan.dfx = DfxFor(output_dir, options.dfx);
  std::filesystem::create_directories(output_dir);
  if (auto written = codegen_orch::WriteOrchestration(orchestration, output_dir); !written)
    return Fail(std::move(written.error()));
  auto info = PlatformOf(platform);
  if (!info) return pypto::unexpected(info.error());
  if (auto written = WriteKernelModules(*lowered, orchestration, *info, output_dir, warn); !written)
    return pypto::unexpected(written.error());
  std::ofstream(std::filesystem::path(output_dir) / kLoweredProgramFile) << ir::PrintProgram(*lowered);
  auto compiled = std::make_shared<CompiledProgram>();
  compiled->lowered = lowered;
  compiled->plan = std::move(orchestration.plan);
  compiled->platform = platform;
  compiled->output_dir = output_dir;
  compiled->orchestration_source = orchestration.cpp_source;
  compiled->deferred = orchestration.deferred;
  auto plugin = PluginFor(platform);
  if (!plugin) return pypto::unexpected(plugin.error());
  pypto_ir_program program_handle{compiled->lowered};
  pypto_rt_plan plan_handle{compiled->plan};
  const pypto_status status = (*plugin)->prepare(platform.c_str(), &program_handle, &plan_handle, output_dir.c_str());
  // A device build that stopped after the artifacts (a tool is missing) is a compiled program all the
  // same, as upstream's is without ptoas; running it says what is missing.
  if (status == PYPTO_ERR_UNAVAILABLE) compiled->device_build_incomplete = pypto_last_error_message();
  else if (status != PYPTO_OK) return Fail(FailureKind::Runtime, pypto_last_error_message());
  return compiled;
}

}  // namespace pypto::driver
