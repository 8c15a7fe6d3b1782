#include <fmt/format.h>
#include <fmt/ranges.h>

#include "plugin_for.h"
#include "pypto/driver/pipeline.h"

namespace pypto::driver {

namespace {

// "a, b, c or d".
std::string OneOf(const std::vector<std::string>& names) {
  if (names.size() <= 1) return names.empty() ? "no platform (no backend plugin is installed)" : names[0];
  return fmt::format("{} or {}", fmt::join(names.begin(), names.end() - 1, ", "), names.back());
}

// Why a device platform that a simulator names cannot run: no installed plugin serves it.
std::string NoDeviceBackend(const rt::PlatformInfo& device, const std::string& registry_error) {
  const std::string& sim = device.simulated_by;
  if (device.soc.name.starts_with("Ascend"))
    return fmt::format("platform '{}' runs on an Ascend NPU, and no device backend (the ascend plugin) is installed: "
                       "{}. Run on the simulator instead: -p {} (RunConfig(platform=\"{}\"))",
                       device.name, registry_error, sim, sim);
  return fmt::format("platform '{}' runs on a {} device, and no backend plugin serving it is installed: {}. Run on the "
                     "simulator instead: -p {} (RunConfig(platform=\"{}\"))",
                     device.name, device.soc.name, registry_error, sim, sim);
}

}  // namespace

Result<rt::PlatformInfo> PlatformOf(const std::string& platform) {
  auto& registry = rt::BackendRegistry::Get();
  auto info = registry.Platform(platform);
  if (info) return std::move(*info);
  std::vector<std::string> known;
  for (const auto& each : registry.Platforms()) known.push_back(each.name);
  return Fail(FailureKind::InvalidArgument, fmt::format("unknown platform '{}' (expected {})", platform, OneOf(known)));
}

Result<const pypto_backend_plugin*> PluginFor(const std::string& platform) {
  auto plugin = rt::BackendRegistry::Get().ForPlatform(platform);
  if (plugin) return *plugin;
  auto info = PlatformOf(platform);
  if (!info) return pypto::unexpected(info.error());
  if (!info->served()) return Fail(FailureKind::DeviceUnavailable, NoDeviceBackend(*info, plugin.error()));
  return Fail(FailureKind::Runtime, plugin.error());
}

}  // namespace pypto::driver
