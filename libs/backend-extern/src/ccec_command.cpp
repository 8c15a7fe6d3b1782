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
#include <cctype>
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

// The core family of an arch: "c220" (A2/A3) or "c310" (A5).
pypto::expected<std::string_view, std::string> DavFamily(std::string_view arch) {
  if (arch == "a2a3") return "c220";
  if (arch == "a5") return "c310";
  return pypto::unexpected(fmt::format("unknown device arch '{}' (expected \"a2a3\" or \"a5\")", arch));
}

// "vec" for vector cores, "cube" for cube cores.
pypto::expected<std::string_view, std::string> CoreVariant(std::string_view core_type) {
  if (core_type == "aiv") return "vec";
  if (core_type == "aic") return "cube";
  return pypto::unexpected(fmt::format("unknown core type '{}' (expected \"aic\" or \"aiv\")", core_type));
}

pypto::expected<std::string, std::string> AicoreArch(std::string_view arch, std::string_view core_type) {
  auto family = DavFamily(arch);
  if (!family) return pypto::unexpected(family.error());
  auto variant = CoreVariant(core_type);
  if (!variant) return pypto::unexpected(variant.error());
  return fmt::format("dav-{}-{}", *family, *variant);
}

std::string Upper(std::string_view text) {
  std::string upper(text);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return upper;
}

}  // namespace

pypto::expected<std::vector<std::string>, std::string> DeviceMacroFlags(std::string_view arch,
                                                                        std::string_view core_type) {
  auto family = DavFamily(arch);
  if (!family) return pypto::unexpected(family.error());
  auto variant = CoreVariant(core_type);
  if (!variant) return pypto::unexpected(variant.error());
  return std::vector<std::string>{fmt::format("-D__DAV_{}__", Upper(*family)),
                                  fmt::format("-D__DAV_{}_{}__", Upper(*family), Upper(*variant))};
}

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
