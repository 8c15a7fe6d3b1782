#include "pypto/runtime/compiled_orchestration.h"

#include <fmt/format.h>

#include <array>
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <cstdlib>

#include "pypto/support/host_compiler.h"

namespace pypto::rt {
namespace fs = std::filesystem;
namespace {

constexpr const char* kRunSymbol = "pypto_orchestration_run";
using RunFn = int(Runtime*, const ChipTensor*, size_t, char*, size_t);

fs::path ThisLibrary() { return fs::path(boost::dll::this_line_location().string()); }

// The runtime's public headers (and the ones they include): installed beside the API directory's
// parent include tree, or in the source tree.
std::vector<fs::path> RuntimeIncludeDirs() {
  const fs::path installed = ThisLibrary().parent_path().parent_path() / "include";
  std::error_code ec;
  if (fs::exists(installed / "pypto" / "runtime" / "runtime.h", ec)) return {installed};
  return {PYPTO_RUNTIME_SOURCE_INCLUDE_DIR, PYPTO_IR_SOURCE_INCLUDE_DIR};
}

}  // namespace

fs::path OrchestrationApiDir() {
  if (const char* dir = std::getenv("PYPTO_ORCHESTRATION_API_DIR"); dir && *dir) return dir;
  std::error_code ec;
  const fs::path installed = ThisLibrary().parent_path() / "pypto" / "orchestration_api";
  if (fs::is_directory(installed, ec)) return installed;
  return PYPTO_ORCHESTRATION_API_SOURCE_DIR;
}

std::vector<std::string> OrchestrationCompileCommand(const fs::path& source, const fs::path& output) {
  std::vector<std::string> argv = pypto::HostCompiler();
  for (const char* flag : {"-std=c++23", "-O1", "-fPIC", "-shared"}) argv.emplace_back(flag);
  argv.push_back("-I" + OrchestrationApiDir().string());
  for (const auto& dir : RuntimeIncludeDirs()) argv.push_back("-I" + dir.string());
  argv.push_back(source.string());
  // The runtime library itself, by path, and found again there when the object loads.
  argv.push_back(ThisLibrary().string());
  argv.push_back("-Wl,-rpath," + ThisLibrary().parent_path().string());
  argv.emplace_back("-o");
  argv.push_back(output.string());
  return argv;
}

pypto::expected<void, FatalError> RunCompiledOrchestration(const fs::path& library, std::span<const ChipTensor> params,
                                                           Runtime& runtime) {
  boost::dll::shared_library loaded;
  try {
    loaded.load(library.string(), boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    return pypto::unexpected(FatalError{FatalCode::InvalidArgs, fmt::format("cannot load {}: {}", library.string(), e.what())});
  }
  if (!loaded.has(kRunSymbol))
    return pypto::unexpected(FatalError{
        FatalCode::InvalidArgs,
        fmt::format("{} has no {}: was it compiled against pto_orchestration_api.h?", library.string(), kRunSymbol)});
  std::array<char, 4096> error{};
  const int code = loaded.get<RunFn>(kRunSymbol)(&runtime, params.data(), params.size(), error.data(), error.size());
  if (code == 0) return {};
  // The message is FatalError::str() of the error inside the object; keep its text as the message.
  return pypto::unexpected(FatalError{static_cast<FatalCode>(code), error.data()});
}

}  // namespace pypto::rt
