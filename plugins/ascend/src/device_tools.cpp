#include "device_tools.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

namespace pypto::ascend {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> Env(const char* name) {
  const char* value = std::getenv(name);
  if (!value || !*value) return std::nullopt;
  return std::string(value);
}

bool IsExecutableFile(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && access(path.c_str(), X_OK) == 0;
}

std::optional<fs::path> FindOnPath(std::string_view name) {
  auto path = Env("PATH");
  if (!path) return std::nullopt;
  std::stringstream dirs(*path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    if (fs::path candidate = fs::path(dir) / name; IsExecutableFile(candidate)) return candidate;
  }
  return std::nullopt;
}

ToolLookup FindPtoas() {
  ToolLookup lookup{.what = "ptoas",
                    .hint = "set PTOAS to the ptoas binary or PTOAS_ROOT to its install, or put ptoas on PATH"};
  if (auto explicit_path = Env("PTOAS")) {
    if (IsExecutableFile(*explicit_path)) lookup.path = fs::path(*explicit_path);
    else lookup.hint = fmt::format("PTOAS={} is not an executable file", *explicit_path);
    return lookup;
  }
  if (auto root = Env("PTOAS_ROOT")) {
    for (const fs::path candidate : {fs::path(*root) / "ptoas", fs::path(*root) / "bin" / "ptoas"}) {
      if (IsExecutableFile(candidate)) {
        lookup.path = candidate;
        return lookup;
      }
    }
  }
  lookup.path = FindOnPath("ptoas");
  return lookup;
}

// The same ccec the compile commands name (backend_extern::CcecCompileCommand).
ToolLookup FindCcec() {
  ToolLookup lookup{.what = "ccec", .hint = "set ASCEND_HOME_PATH to the CANN toolkit (its bin/ccec), or put ccec on PATH"};
  if (auto home = Env("ASCEND_HOME_PATH")) {
    if (fs::path candidate = fs::path(*home) / "bin" / "ccec"; IsExecutableFile(candidate)) lookup.path = candidate;
    else lookup.hint = fmt::format("ASCEND_HOME_PATH={} has no executable bin/ccec", *home);
    return lookup;
  }
  lookup.path = FindOnPath("ccec");
  return lookup;
}

ToolLookup FindPtoIsa() {
  ToolLookup lookup{.what = "pto-isa headers", .hint = "set PTO_ISA_ROOT to a pto-isa checkout (its include/pto/pto-inst.hpp)"};
  auto root = Env("PTO_ISA_ROOT");
  if (!root) return lookup;
  const fs::path include = fs::path(*root) / "include";
  if (!fs::exists(include / "pto" / "pto-inst.hpp")) {
    lookup.hint = fmt::format("PTO_ISA_ROOT={} has no include/pto/pto-inst.hpp", *root);
    return lookup;
  }
  lookup.path = include;
  lookup.include_dirs = {include, include / "pto"};
  return lookup;
}

// Kernels include the runtime's "tensor.h" (the ChipTensor descriptor) and "intrinsic.h" (block and
// lane ids); on a device they are the runtime's own, from its source tree.
ToolLookup FindRuntimeHeaders(std::string_view arch) {
  ToolLookup lookup{.what = "runtime kernel headers (tensor.h, intrinsic.h)",
                    .hint = "set SIMPLER_ROOT to a checkout of the runtime, hw-native-sys/simpler"};
  auto root = Env("SIMPLER_ROOT");
  if (!root) return lookup;
  const fs::path src = fs::path(*root) / "src";
  const fs::path tensor_dir = src / "common" / "task_interface";
  const fs::path intrinsic_dir = src / std::string(arch) / "runtime" / "tensormap_and_ringbuffer" / "common";
  if (!fs::exists(tensor_dir / "tensor.h") || !fs::exists(intrinsic_dir / "intrinsic.h")) {
    lookup.hint = fmt::format("SIMPLER_ROOT={} lacks {} or {}", *root, (tensor_dir / "tensor.h").string(),
                              (intrinsic_dir / "intrinsic.h").string());
    return lookup;
  }
  lookup.path = fs::path(*root);
  lookup.include_dirs = {tensor_dir, intrinsic_dir, src / "common" / "platform" / "include"};
  return lookup;
}

}  // namespace

DeviceTools FindDeviceTools(std::string_view arch) {
  return DeviceTools{.ptoas = FindPtoas(), .ccec = FindCcec(), .pto_isa = FindPtoIsa(),
                     .runtime_headers = FindRuntimeHeaders(arch)};
}

}  // namespace pypto::ascend
