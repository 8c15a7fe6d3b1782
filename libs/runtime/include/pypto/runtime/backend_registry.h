// Finds backend plugins and maps platform names to them. Plugins are shared libraries loaded with
// Boost.DLL from $PYPTO_PLUGIN_PATH (colon-separated), the build tree and the install directory.
// The registry is the one place that knows platforms: what each is (simulator or device, its SoC,
// whether it wants .pto modules) comes from the descriptions of the plugins serving them.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pypto-c/backend_plugin.h"
#include "pypto/ir/soc.h"
#include "pypto/support/expected.h"

namespace pypto::rt {

struct PluginInfo {
  std::string name;
  std::string description;
  std::string path;
  std::vector<std::string> platforms;
};

// A platform as its plugin describes it (pypto_platform_desc), with the SoC resolved.
struct PlatformInfo {
  std::string name;
  // The plugin serving it; empty for a device platform that a simulator names (`simulates`) but no
  // installed plugin serves: it is known, and running on it says that its backend is missing.
  std::string plugin;
  std::string plugin_description;
  std::string plugin_path;
  bool simulator = true;
  std::string simulates;  // a simulator: the device platform it stands for, if any
  // A device platform: its simulator, when one names it (for the "run on the simulator" advice).
  std::string simulated_by;
  ir::SocSpec soc;
  pypto_pto_modules pto_modules = PYPTO_PTO_OPTIONAL;
  std::string toolchain;
  bool served() const { return !plugin.empty(); }
};

class BackendRegistry {
 public:
  // The process-wide registry; plugins are discovered on first use.
  static BackendRegistry& Get();

  // The plugin serving `platform`, or a message naming the known platforms / the ABI mismatch.
  pypto::expected<const pypto_backend_plugin*, std::string> ForPlatform(std::string_view platform);
  // What `platform` is (served or only named by a simulator), or ForPlatform's message.
  pypto::expected<PlatformInfo, std::string> Platform(std::string_view platform);
  // Every known platform: those the plugins serve, each simulator followed by the device platform it
  // stands for (served or not), in the order the plugins were found.
  std::vector<PlatformInfo> Platforms();
  std::vector<PluginInfo> Plugins();
  // Problems met while loading (a mismatched ABI, a library without the entry point).
  std::vector<std::string> LoadErrors();
  std::vector<std::string> SearchPath() const;

  // Loads one plugin file; used by discovery and by tests.
  pypto::expected<PluginInfo, std::string> LoadFile(const std::string& path);

  BackendRegistry();
  ~BackendRegistry();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pypto::rt
