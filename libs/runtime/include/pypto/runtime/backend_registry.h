// Finds backend plugins and maps platform names to them. Plugins are shared libraries loaded with
// Boost.DLL from $PYPTO_PLUGIN_PATH (colon-separated), the build tree and the install directory.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pypto-c/backend_plugin.h"
#include "pypto/support/expected.h"

namespace pypto::rt {

struct PluginInfo {
  std::string name;
  std::string description;
  std::string path;
  std::vector<std::string> platforms;
};

class BackendRegistry {
 public:
  // The process-wide registry; plugins are discovered on first use.
  static BackendRegistry& Get();

  // The plugin serving `platform`, or a message naming the known platforms / the ABI mismatch.
  pypto::expected<const pypto_backend_plugin*, std::string> ForPlatform(std::string_view platform);
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
