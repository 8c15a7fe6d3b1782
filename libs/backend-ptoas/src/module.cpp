#include "pypto/backend_ptoas/module.h"

#include <fmt/format.h>

#include "kernel_emitter.h"
#include "kernel_plan.h"

namespace pypto::backend_ptoas {

bool IsTargetArch(std::string_view arch) { return arch == "a2a3" || arch == "a5"; }

pypto::expected<std::string, std::string> EmitModule(const ir::Function& kernel, std::string_view arch,
                                                     const ModuleOptions& options) {
  if (!IsTargetArch(arch)) {
    return pypto::unexpected(fmt::format("unknown target arch '{}' (expected \"a2a3\" or \"a5\")", arch));
  }
  auto plan = PlanKernel(kernel, arch);
  if (!plan) return pypto::unexpected(plan.error());
  std::string function = KernelEmitter(kernel, *plan, options).Emit();
  return fmt::format("module attributes {{pto.target_arch = \"{}\"}} {{\n{}}}\n", arch, function);
}

}  // namespace pypto::backend_ptoas
