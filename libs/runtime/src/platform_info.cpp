// Reading a plugin's platform descriptions. Everything is checked at load, so that a plugin with a
// malformed description is refused with what to fix rather than failing at a first run.
#include "platform_info.h"

#include <fmt/format.h>

namespace pypto::rt {
namespace {

using Error = pypto::unexpected<std::string>;

// The SoC a description names (a libs/ir table) or spells out.
pypto::expected<ir::SocSpec, std::string> ReadSoc(const pypto_soc_desc& soc) {
  if (soc.table) {
    if (const ir::SocSpec* spec = ir::SocNamed(soc.table)) return *spec;
    return Error(fmt::format("names SoC table '{}', which is not one of libs/ir's (Ascend910B, Ascend950)", soc.table));
  }
  if (!soc.name || !*soc.name || !soc.arch || !*soc.arch)
    return Error("describes its SoC without a table, so it must give the SoC's name and arch");
  if (soc.aic_cores == 0 && soc.aiv_cores == 0) return Error(fmt::format("gives SoC '{}' no cores", soc.name));
  return ir::SocSpec{.name = soc.name,
                     .arch = soc.arch,
                     .aic_cores = static_cast<int>(soc.aic_cores),
                     .aiv_cores = static_cast<int>(soc.aiv_cores),
                     .ub_bytes = static_cast<int64_t>(soc.ub_bytes),
                     .l1_bytes = static_cast<int64_t>(soc.l1_bytes),
                     .l0a_bytes = static_cast<int64_t>(soc.l0a_bytes),
                     .l0b_bytes = static_cast<int64_t>(soc.l0b_bytes),
                     .l0c_bytes = static_cast<int64_t>(soc.l0c_bytes),
                     .bias_bytes = static_cast<int64_t>(soc.bias_bytes),
                     .alignment = static_cast<int64_t>(soc.alignment)};
}

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
  auto soc = ReadSoc(desc.soc);
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
