// Command lines (argv, never a shell string) that compile an external kernel.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "pypto/support/expected.h"

namespace pypto::backend_extern {

// For the CPU simulator: one shared object per kernel, built by the host compiler ($CXX, split on
// spaces, else "c++") with -D__CPU_SIM. Kernel include dirs come before the runtime's so a kernel
// may shadow a runtime header.
std::vector<std::string> HostCompileCommand(const std::filesystem::path& source,
                                            const std::vector<std::filesystem::path>& include_dirs,
                                            const std::vector<std::filesystem::path>& runtime_include_dirs,
                                            const std::filesystem::path& output_so);

// For the device: an object file from Ascend's `ccec` ($ASCEND_HOME_PATH/bin/ccec when that is set).
// `arch` is "a2a3" or "a5", `core_type` "aic" (cube) or "aiv" (vector); anything else is an error.
pypto::expected<std::vector<std::string>, std::string> CcecCompileCommand(
    const std::filesystem::path& source, const std::vector<std::filesystem::path>& include_dirs,
    std::string_view arch, std::string_view core_type, const std::filesystem::path& output);

}  // namespace pypto::backend_extern
