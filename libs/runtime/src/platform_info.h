// A plugin's platform descriptions (pypto_platform_desc), checked and read into PlatformInfo.
#pragma once

#include <string>
#include <vector>

#include "pypto/runtime/backend_registry.h"

namespace pypto::rt {

// The platforms `plugin` (loaded from `path`) describes, or why its descriptions cannot be used.
pypto::expected<std::vector<PlatformInfo>, std::string> ReadPlatforms(const pypto_backend_plugin& plugin,
                                                                      const std::string& path);

}  // namespace pypto::rt
