// Reading a plugin's platform descriptions. Everything is checked at load, so that a plugin with a
// malformed description is refused with what to fix rather than failing at a first run.
#include "platform_info.h"

#include <fmt/format.h>

namespace pypto::rt {
namespace {

using Error = pypto::unexpected<std::string>;

pypto::expected<PlatformInfo, std::string> ReadPlatform(const pypto_backend_plugin& plugin, const std::string& path,
                                                        const pypto_platform_desc& desc, size_t index) {
  auto fail = [&](const std::string& what) {
    return Error(fmt::format("plugin '{}' ({}): platform {} {}", plugin.name, path,
                             desc.name ? fmt::format("'{}'", desc.name) : fmt::format("#{}", index), what));
  };
  if (!desc.name || !*desc.name) return fail("has no name");
  if (desc.kind != PYPTO_PLATFORM_SIMULATOR && desc.kind != PYPTO_PLATFORM_DEVICE)
    return fail(fmt::format("has kind {}, which is neither PYPTO_PLATFORM_SIMULATOR nor PYPTO_PLATFORM_DEVICE",
                            desc.kind));
  if (desc.pto_modules > PYPTO_PTO_NONE)
    return fail(fmt::format("has pto_modules {}, which is not a pypto_pto_modules value", desc.pto_modules));
  if (desc.simulates && desc.kind != PYPTO_PLATFORM_SIMULATOR)
    return fail(fmt::format("is a device platform, so it cannot simulate '{}'", desc.simulates));
  auto soc = ir::SocFromDesc(desc.soc);
  if (!soc) return fail(soc.error());
  return PlatformInfo{.name = desc.name,
                      .plugin = plugin.name,
                      .plugin_description = plugin.description ? plugin.description : "",
                      .plugin_path = path,
                      .simulator = desc.kind == PYPTO_PLATFORM_SIMULATOR,
                      .simulates = desc.simulates ? desc.simulates : "",
                      .simulated_by = "",
                      .soc = std::move(*soc),
                      .pto_modules = static_cast<pypto_pto_modules>(desc.pto_modules),
                      .toolchain = desc.toolchain ? desc.toolchain : ""};
}

}  // namespace

pypto::expected<std::vector<PlatformInfo>, std::string> ReadPlatforms(const pypto_backend_plugin& plugin,
                                                                      const std::string& path) {
  if (!plugin.platforms || plugin.num_platforms == 0)
    return Error(fmt::format("plugin '{}' ({}) describes no platforms", plugin.name, path));
  std::vector<PlatformInfo> platforms;
  for (size_t i = 0; i < plugin.num_platforms; ++i) {
    auto platform = ReadPlatform(plugin, path, plugin.platforms[i], i);
    if (!platform) return Error(platform.error());
    platforms.push_back(std::move(*platform));
  }
  return platforms;
}

}  // namespace pypto::rt
