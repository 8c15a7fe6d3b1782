// Backend plugin discovery and loading with Boost.DLL.
//
// Discovery scans, in order, every directory of the search path and its immediate subdirectories
// (plugins are built in build/plugins/<name>/) for files named *pypto_plugin_*.so. A file name already
// loaded from an earlier directory is shadowed, like an executable on $PATH, so a build tree and an
// installed copy of the same plugin never both load. The first plugin claiming a platform serves it.
// Loaded plugins stay loaded for the life of the process: their function pointers are handed out.
// The plugins' platform descriptions are the only list of platforms there is (platform_info.h).
#include "pypto/runtime/backend_registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "platform_info.h"

#ifndef PYPTO_PLUGIN_BUILD_DIR
#define PYPTO_PLUGIN_BUILD_DIR ""
#endif
#ifndef PYPTO_PLUGIN_INSTALL_DIR
#define PYPTO_PLUGIN_INSTALL_DIR ""
#endif

namespace pypto::rt {

namespace fs = std::filesystem;

namespace {

bool IsPluginFileName(const std::string& name) {
  return name.find("pypto_plugin_") != std::string::npos && name.ends_with(".so");
}

// Plugin files directly in `dir`, sorted for a stable order; its subdirectories go to `subdirs`.
std::vector<fs::path> PluginFilesDirectlyIn(const fs::path& dir, std::vector<fs::path>* subdirs) {
  std::vector<fs::path> files;
  std::error_code ec;  // a missing or unreadable directory simply holds no plugins
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_directory(ec)) {
      if (subdirs) subdirs->push_back(entry.path());
    } else if (IsPluginFileName(entry.path().filename().string())) {
      files.push_back(entry.path());
    }
  }
  std::ranges::sort(files);
  return files;
}

// Plugin files in `dir`, then in each of its immediate subdirectories.
std::vector<fs::path> PluginFilesIn(const fs::path& dir) {
  std::vector<fs::path> subdirs;
  std::vector<fs::path> files = PluginFilesDirectlyIn(dir, &subdirs);
  std::ranges::sort(subdirs);
  for (const fs::path& subdir : subdirs) {
    std::vector<fs::path> inside = PluginFilesDirectlyIn(subdir, nullptr);
    files.insert(files.end(), inside.begin(), inside.end());
  }
  return files;
}

std::vector<std::string> SearchDirectories() {
  std::vector<std::string> dirs;
  auto add = [&](std::string dir) {
    if (dir.empty()) return;
    dir = fs::path(dir).lexically_normal().string();
    if (std::ranges::find(dirs, dir) == dirs.end()) dirs.push_back(std::move(dir));
  };
  if (const char* env = std::getenv("PYPTO_PLUGIN_PATH")) {
    std::string_view rest = env;
    while (!rest.empty()) {
      const size_t colon = rest.find(':');
      add(std::string(rest.substr(0, colon)));
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
  }
  add(PYPTO_PLUGIN_BUILD_DIR);
  add(PYPTO_PLUGIN_INSTALL_DIR);
  // Next to this library, for a relocated installation: <libdir>/pypto/plugins.
  boost::dll::fs::error_code ec;
  const boost::dll::fs::path self = boost::dll::this_line_location(ec);
  if (!ec) add((fs::path(self.parent_path().string()) / "pypto" / "plugins").string());
  return dirs;
}

// The libraries behind handed-out plugins. Never destroyed, so never unloaded: a plugin pointer
// obtained from any registry stays valid until the process exits.
void KeepLoaded(boost::dll::shared_library library) {
  static std::mutex mu;
  static auto* kept = new std::vector<boost::dll::shared_library>();
  std::lock_guard lock(mu);
  kept->push_back(std::move(library));
}

std::vector<std::string> NamesOf(const std::vector<PlatformInfo>& platforms) {
  std::vector<std::string> names;
  for (const PlatformInfo& platform : platforms) names.push_back(platform.name);
  return names;
}

// A plugin of ABI 1 or 2 exports the old entry point: it is found, to be refused by its version.
// Both ABIs start with abi_version and name, which is all that is read.
struct LegacyPluginHead {
  uint32_t abi_version;
  const char* name;
};

// An ABI 3 plugin's struct is ABI 4's without its last field, run_session_plan: a copy of what it has,
// that field NULL, serves as an ABI 4 plugin. Kept for the life of the process, like the library.
const pypto_backend_plugin* UpgradedFromAbi3(const pypto_backend_plugin& v3) {
  static std::mutex mu;
  static auto* kept = new std::deque<pypto_backend_plugin>();
  pypto_backend_plugin upgraded{};
  std::memcpy(&upgraded, &v3, offsetof(pypto_backend_plugin, run_session_plan));
  std::lock_guard lock(mu);
  return &kept->emplace_back(upgraded);
}

std::string AbiMismatch(const char* name, const std::string& path, uint32_t abi_version) {
  return fmt::format("plugin '{}' ({}) was built for backend ABI {}, this build of pypto needs ABI {}; "
                     "rebuild the plugin",
                     name ? name : "?", path, abi_version, PYPTO_BACKEND_PLUGIN_ABI_VERSION);
}

// The device platform a simulator stands for, when no plugin serves it: known, unserved.
PlatformInfo UnservedDevice(const PlatformInfo& simulator) {
  return PlatformInfo{.name = simulator.simulates,
                      .simulator = false,
                      .simulated_by = simulator.name,
                      .soc = simulator.soc,
                      .pto_modules = PYPTO_PTO_REQUIRED};
}

}  // namespace

class BackendRegistry::Impl {
 public:
  pypto::expected<const pypto_backend_plugin*, std::string> ForPlatform(std::string_view platform);
  pypto::expected<PlatformInfo, std::string> Platform(std::string_view platform);
  std::vector<PlatformInfo> Platforms();
  std::vector<PluginInfo> Plugins();
  std::vector<std::string> LoadErrors();
  pypto::expected<PluginInfo, std::string> LoadFile(const std::string& path);

 private:
  void DiscoverLocked();
  pypto::expected<PluginInfo, std::string> LoadLocked(const fs::path& path);
  pypto::expected<PluginInfo, std::string> TryLoad(const std::string& path);
  void Register(const pypto_backend_plugin* plugin, PluginInfo info, std::vector<PlatformInfo> platforms);
  std::vector<PlatformInfo> PlatformsLocked() const;
  std::string UnknownPlatformLocked(std::string_view platform) const;

  std::mutex mu_;
  bool discovered_ = false;
  // Every file tried, by canonical path, so that a file is loaded and reported at most once.
  std::map<fs::path, pypto::expected<PluginInfo, std::string>> outcomes_;
  std::vector<PluginInfo> plugins_;
  std::map<std::string, const pypto_backend_plugin*, std::less<>> by_platform_;
  std::vector<PlatformInfo> platforms_;  // served ones, in the order they were registered
  std::vector<std::string> load_errors_;
};

pypto::expected<const pypto_backend_plugin*, std::string> BackendRegistry::Impl::ForPlatform(
    std::string_view platform) {
  std::lock_guard lock(mu_);
  DiscoverLocked();
  if (auto found = by_platform_.find(platform); found != by_platform_.end()) return found->second;
  return pypto::unexpected(UnknownPlatformLocked(platform));
}

pypto::expected<PlatformInfo, std::string> BackendRegistry::Impl::Platform(std::string_view platform) {
  std::lock_guard lock(mu_);
  DiscoverLocked();
  for (PlatformInfo& info : PlatformsLocked())
    if (info.name == platform) return std::move(info);
  return pypto::unexpected(UnknownPlatformLocked(platform));
}

std::vector<PlatformInfo> BackendRegistry::Impl::Platforms() {
  std::lock_guard lock(mu_);
  DiscoverLocked();
  return PlatformsLocked();
}

// A device platform a simulator stands for is listed right after that simulator, so that each
// simulator and its device read together ("a2a3sim, a2a3, a5sim, a5") whichever plugin loads first.
std::vector<PlatformInfo> BackendRegistry::Impl::PlatformsLocked() const {
  std::map<std::string, std::string, std::less<>> simulator_of;  // device platform -> its simulator
  for (const PlatformInfo& info : platforms_)
    if (!info.simulates.empty()) simulator_of.emplace(info.simulates, info.name);
  auto served = [&](std::string_view name) -> const PlatformInfo* {
    for (const PlatformInfo& info : platforms_)
      if (info.name == name) return &info;
    return nullptr;
  };
  std::vector<PlatformInfo> ordered;
  for (const PlatformInfo& info : platforms_) {
    if (!info.simulator && simulator_of.contains(info.name)) continue;  // placed after its simulator
    ordered.push_back(info);
    if (info.simulates.empty() || simulator_of.at(info.simulates) != info.name) continue;
    if (const PlatformInfo* device = served(info.simulates); device && !device->simulator) {
      ordered.push_back(*device);
      ordered.back().simulated_by = info.name;
    } else if (!device) {
      ordered.push_back(UnservedDevice(info));
    }
  }
  return ordered;
}

std::string BackendRegistry::Impl::UnknownPlatformLocked(std::string_view platform) const {
  std::vector<std::string> known;
  for (const auto& [name, plugin] : by_platform_) known.push_back(name);
  std::string message =
      fmt::format("unknown platform '{}'; available platforms: {} (plugins searched in: {})", platform,
                  known.empty() ? std::string("none") : fmt::format("{}", fmt::join(known, ", ")),
                  fmt::join(SearchDirectories(), ", "));
  // A refused plugin may be the one that would have served the platform: say why it was refused.
  if (!load_errors_.empty()) message += fmt::format("; plugins not loaded: {}", fmt::join(load_errors_, "; "));
  return message;
}

std::vector<PluginInfo> BackendRegistry::Impl::Plugins() {
  std::lock_guard lock(mu_);
  DiscoverLocked();
  return plugins_;
}

std::vector<std::string> BackendRegistry::Impl::LoadErrors() {
  std::lock_guard lock(mu_);
  DiscoverLocked();
  return load_errors_;
}

pypto::expected<PluginInfo, std::string> BackendRegistry::Impl::LoadFile(const std::string& path) {
  std::lock_guard lock(mu_);
  return LoadLocked(path);
}

void BackendRegistry::Impl::DiscoverLocked() {
  if (discovered_) return;
  discovered_ = true;
  std::set<std::string> seen_names;
  for (const std::string& dir : SearchDirectories()) {
    for (const fs::path& file : PluginFilesIn(dir)) {
      const std::string name = file.filename().string();
      if (seen_names.contains(name)) {
        spdlog::debug("plugin {} is shadowed by an earlier file of the same name", file.string());
        continue;
      }
      // Failures are kept in load_errors_; a refused file shadows nothing, so a good copy later on
      // the path still serves.
      if (LoadLocked(file)) seen_names.insert(name);
    }
  }
}

pypto::expected<PluginInfo, std::string> BackendRegistry::Impl::LoadLocked(const fs::path& path) {
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(path, ec);
  if (ec) canonical = path;
  if (auto tried = outcomes_.find(canonical); tried != outcomes_.end()) return tried->second;
  auto outcome = TryLoad(canonical.string());
  if (!outcome) {
    spdlog::debug("{}", outcome.error());
    load_errors_.push_back(outcome.error());
  }
  outcomes_.emplace(canonical, outcome);
  return outcome;
}

pypto::expected<PluginInfo, std::string> BackendRegistry::Impl::TryLoad(const std::string& path) {
  auto fail = [](std::string message) { return pypto::unexpected(std::move(message)); };
  boost::dll::shared_library library;
  try {
    library.load(boost::dll::fs::path(path));
  } catch (const std::exception& e) {
    return fail(fmt::format("cannot load plugin {}: {}", path, e.what()));
  }
  const bool v3_entry = !library.has(PYPTO_BACKEND_PLUGIN_ENTRY) && library.has(PYPTO_BACKEND_PLUGIN_V3_ENTRY);
  if (!library.has(PYPTO_BACKEND_PLUGIN_ENTRY) && !v3_entry) {
    if (library.has(PYPTO_BACKEND_PLUGIN_LEGACY_ENTRY)) {
      const auto* head = library.get<const LegacyPluginHead*()>(PYPTO_BACKEND_PLUGIN_LEGACY_ENTRY)();
      if (head) return fail(AbiMismatch(head->name, path, head->abi_version));
    }
    return fail(fmt::format("{} is not a pypto backend plugin: it does not export {}", path,
                            PYPTO_BACKEND_PLUGIN_ENTRY));
  }
  const char* entry_name = v3_entry ? PYPTO_BACKEND_PLUGIN_V3_ENTRY : PYPTO_BACKEND_PLUGIN_ENTRY;
  const pypto_backend_plugin* plugin = library.get<const pypto_backend_plugin*()>(entry_name)();
  if (!plugin) return fail(fmt::format("plugin {}: {} returned no plugin", path, entry_name));
  // Only abi_version can be trusted before the check: the rest of the struct may be laid out otherwise.
  // The name is read anyway to make the message useful; every ABI so far keeps it second.
  const uint32_t expected_abi = v3_entry ? 3u : PYPTO_BACKEND_PLUGIN_ABI_VERSION;
  if (plugin->abi_version != expected_abi) return fail(AbiMismatch(plugin->name, path, plugin->abi_version));
  if (v3_entry) plugin = UpgradedFromAbi3(*plugin);
  if (!plugin->name) return fail(fmt::format("plugin {} has no name", path));
  const int session_entries = (plugin->open_session != nullptr) + (plugin->run_session != nullptr) +
                              (plugin->close_session != nullptr);
  if (session_entries != 0 && session_entries != 3)
    return fail(fmt::format("plugin '{}' ({}) sets only some of open_session, run_session and close_session",
                            plugin->name, path));
  if (plugin->run_session_plan && session_entries != 3)
    return fail(fmt::format("plugin '{}' ({}) sets run_session_plan without open_session, run_session and "
                            "close_session",
                            plugin->name, path));
  auto platforms = ReadPlatforms(*plugin, path);
  if (!platforms) return fail(platforms.error());

  PluginInfo info{
      .name = plugin->name,
      .description = plugin->description ? plugin->description : "",
      .path = path,
      .platforms = NamesOf(*platforms),
  };
  KeepLoaded(std::move(library));
  Register(plugin, info, std::move(*platforms));
  spdlog::debug("loaded plugin '{}' from {} (platforms: {})", info.name, info.path, fmt::join(info.platforms, ", "));
  return info;
}

void BackendRegistry::Impl::Register(const pypto_backend_plugin* plugin, PluginInfo info,
                                     std::vector<PlatformInfo> platforms) {
  for (PlatformInfo& platform : platforms) {
    auto [it, inserted] = by_platform_.emplace(platform.name, plugin);
    if (!inserted) {
      load_errors_.push_back(fmt::format("platform '{}' of plugin '{}' ({}) is already served by plugin '{}'",
                                         platform.name, info.name, info.path, it->second->name));
      continue;
    }
    platforms_.push_back(std::move(platform));
  }
  plugins_.push_back(std::move(info));
}

BackendRegistry& BackendRegistry::Get() {
  // Never destroyed: plugins may be in use by static destructors of other libraries at exit.
  static auto* registry = new BackendRegistry();
  return *registry;
}

BackendRegistry::BackendRegistry() : impl_(std::make_unique<Impl>()) {}
BackendRegistry::~BackendRegistry() = default;

pypto::expected<const pypto_backend_plugin*, std::string> BackendRegistry::ForPlatform(std::string_view platform) {
  return impl_->ForPlatform(platform);
}
pypto::expected<PlatformInfo, std::string> BackendRegistry::Platform(std::string_view platform) {
  return impl_->Platform(platform);
}
std::vector<PlatformInfo> BackendRegistry::Platforms() { return impl_->Platforms(); }
std::vector<PluginInfo> BackendRegistry::Plugins() { return impl_->Plugins(); }
std::vector<std::string> BackendRegistry::LoadErrors() { return impl_->LoadErrors(); }
std::vector<std::string> BackendRegistry::SearchPath() const { return SearchDirectories(); }
pypto::expected<PluginInfo, std::string> BackendRegistry::LoadFile(const std::string& path) {
  return impl_->LoadFile(path);
}

}  // namespace pypto::rt
