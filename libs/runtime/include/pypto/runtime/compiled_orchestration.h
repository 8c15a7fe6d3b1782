// Running an orchestration compiled from its generated C++ (orchestration/<fn>.cpp against
// libs/runtime/orchestration_api/pto_orchestration_api.h) instead of from its task plan.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "pypto/runtime/runtime.h"
#include "pypto/support/expected.h"

namespace pypto::rt {

// The directory of pto_orchestration_api.h: $PYPTO_ORCHESTRATION_API_DIR, else the installed copy
// beside this library (<libdir>/pypto/orchestration_api), else the source tree's.
std::filesystem::path OrchestrationApiDir();

// The host compiler command that builds `source` into the shared object `output`, against the API
// header and the runtime's headers, linked with this library.
std::vector<std::string> OrchestrationCompileCommand(const std::filesystem::path& source,
                                                     const std::filesystem::path& output);

// Loads the shared object and runs its orchestration entry on `runtime` with `params` (the
// orchestration's tensors, in order), then waits for every task. The runtime's kernels come from its
// executor, as for a task plan.
pypto::expected<void, FatalError> RunCompiledOrchestration(const std::filesystem::path& library,
                                                           std::span<const ChipTensor> params, Runtime& runtime);

}  // namespace pypto::rt
