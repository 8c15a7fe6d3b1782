#include "pypto/driver/platforms.h"

#include <cstdlib>

#include <fmt/format.h>

#include "pypto/runtime/backend_registry.h"

namespace pypto::driver {

namespace {
constexpr const char* kExplainAbiVariable = "PYPTO_EXPLAIN_ABI";
}

std::string PlatformsTable() {
  auto& registry = rt::BackendRegistry::Get();
  std::string table;
  if (registry.Plugins().empty()) table += "no backend plugins found\n";
  for (const auto& platform : registry.Platforms()) {
    const char* kind = platform.simulator ? "simulator" : "device";
    if (!platform.served()) {
      table += fmt::format("{}\t-\t{}\t{}\tno plugin serves it (its simulator is {})\t-\n", platform.name, kind,
                           platform.soc.name, platform.simulated_by);
      continue;
    }
    table += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\n", platform.name, platform.plugin, kind, platform.soc.name,
                         platform.plugin_description, platform.plugin_path);
  }
  return table;
}

std::string PluginLoadWarnings() {
  std::string warnings;
  for (const auto& error : rt::BackendRegistry::Get().LoadErrors()) warnings += "warning: " + error + "\n";
  return warnings;
}

void RequestAbiExplanations() { setenv(kExplainAbiVariable, "1", 1); }

bool AbiExplanationsRequested() {
  const char* value = std::getenv(kExplainAbiVariable);
  return value && *value;
}

}  // namespace pypto::driver
