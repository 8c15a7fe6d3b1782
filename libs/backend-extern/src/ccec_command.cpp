// Device compile lines for external kernels.
//
// Source of the facts: the simpler runtime's toolchain description
// (hw-native-sys/simpler, simpler_setup/toolchain.py, CCECToolchain, and kernel_compiler.py), read
// through the search tools. There, ccec compiles one kernel to an object in CCE mode for AICore only;
// the core type picks the target: A2/A3 uses the dav-c220 family and A5 the dav-c310 family, with the
// "-vec" variant for vector cores (aiv) and "-cube" for cube cores (aic). Stacks are sized 0x8000,
// overflow recording, and scalar dcci insertion are turned off, address transformation is on,
// MEMORY_BASE is defined, and A5 hardware additionally enables vector-function alias analysis
// across loop iterations. Include dirs follow the flags, then `-o <output> <source>`.
#include <cstdlib>

#include <fmt/format.h>

#include "pypto/backend_extern/compile_command.h"

namespace pypto::backend_extern {
namespace {

std::string CcecPath() {
  if (const char* home = std::getenv("ASCEND_HOME_PATH"); home && *home) {
    return (std::filesystem::path(home) / "bin" / "ccec").string();
  }
  return "ccec";
}

pypto::expected<std::string, std::string> AicoreArch(std::string_view arch, std::string_view core_type) {
  std::string_view family;
  if (arch == "a2a3") {
    family = "dav-c220";
  } else if (arch == "a5") {
    family = "dav-c310";
  } else {
    return pypto::unexpected(fmt::format("unknown device arch '{}' (expected \"a2a3\" or \"a5\")", arch));
  }
  if (core_type == "aiv") return fmt::format("{}-vec", family);
  if (core_type == "aic") return fmt::format("{}-cube", family);
  return pypto::unexpected(fmt::format("unknown core type '{}' (expected \"aic\" or \"aiv\")", core_type));
}

}  // namespace

pypto::expected<std::vector<std::string>, std::string> CcecCompileCommand(
    const std::filesystem::path& source, const std::vector<std::filesystem::path>& include_dirs,
    std::string_view arch, std::string_view core_type, const std::filesystem::path& output) {
  auto aicore_arch = AicoreArch(arch, core_type);
  if (!aicore_arch) return pypto::unexpected(aicore_arch.error());
  std::vector<std::string> argv = {CcecPath(), "-c", "-O3", "-g", "-x", "cce", "-Wall", "-std=c++17",
                                   "--cce-aicore-only", "--cce-aicore-arch=" + *aicore_arch};
  for (const char* option : {"-cce-aicore-stack-size=0x8000", "-cce-aicore-function-stack-size=0x8000",
                             "-cce-aicore-record-overflow=false", "-cce-aicore-addr-transform",
                             "-cce-aicore-dcci-insert-for-scalar=false"}) {
    argv.emplace_back("-mllvm");
    argv.emplace_back(option);
  }
  argv.emplace_back("-DMEMORY_BASE");
  if (arch == "a5") {
    argv.emplace_back("-mllvm");
    argv.emplace_back("-cce-vf-aa-between-iters=true");
  }
  for (const auto& dir : include_dirs) argv.push_back("-I" + dir.string());
  argv.emplace_back("-o");
  argv.push_back(output.string());
  argv.push_back(source.string());
  return argv;
}

}  // namespace pypto::backend_extern
