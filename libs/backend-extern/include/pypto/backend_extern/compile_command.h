// Command lines (argv, never a shell string) that compile an external kernel.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "pypto/support/expected.h"

namespace pypto::backend_extern {

// For the CPU simulator: one shared object per kernel, built by the host compiler ($CXX, split on
// spaces, else "c++"), C++17 at -O2. __CPU_SIM is not defined, so the kernel's device body is compiled
// against the simulator's implementation of the device interfaces, unless $PYPTO_EXTERN_CPU_SIM is 1.
// Kernel include dirs come before the runtime's so a kernel may shadow a runtime header.
std::vector<std::string> HostCompileCommand(const std::filesystem::path& source,
                                            const std::vector<std::filesystem::path>& include_dirs,
                                            const std::vector<std::filesystem::path>& runtime_include_dirs,
                                            const std::filesystem::path& output_so);

// The macros the device compiler predefines for a kernel built for `arch` ("a2a3" or "a5") and
// `core_type` ("aic" or "aiv"): the core family and its variant, `-D__DAV_C220__ -D__DAV_C220_VEC__`
// for an A2/A3 vector kernel, `__DAV_C310__` / `__DAV_C310_CUBE__` for an A5 cube kernel. A host build
// of a hand-written kernel defines them too, so that a body guarded on them is the body the device
// runs (seed 002: CCEC externs see the _C220_ macros, not pto-isa's __DAV_VEC__ / __DAV_CUBE__).
pypto::expected<std::vector<std::string>, std::string> DeviceMacroFlags(std::string_view arch,
                                                                        std::string_view core_type);

// For the device: an object file from Ascend's `ccec` ($ASCEND_HOME_PATH/bin/ccec when that is set).
// `arch` is "a2a3" or "a5", `core_type` "aic" (cube) or "aiv" (vector); anything else is an error.
pypto::expected<std::vector<std::string>, std::string> CcecCompileCommand(
    const std::filesystem::path& source, const std::vector<std::filesystem::path>& include_dirs,
    std::string_view arch, std::string_view core_type, const std::filesystem::path& output);

}  // namespace pypto::backend_extern
