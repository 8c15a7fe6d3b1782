#include "pypto/runtime/comm_domain.h"

#include <map>
#include <mutex>
#include <shared_mutex>

namespace pypto::rt {
namespace {

struct Registry {
  std::shared_mutex mutex;
  int64_t next = 1;
  std::map<int64_t, std::shared_ptr<const CommDomain>> domains;
};

Registry& TheRegistry() {
  static Registry registry;
  return registry;
}

}  // namespace

int64_t RegisterCommDomain(CommDomain domain) {
  auto& registry = TheRegistry();
  std::unique_lock lock(registry.mutex);
  const int64_t handle = registry.next++;
  registry.domains.emplace(handle, std::make_shared<const CommDomain>(std::move(domain)));
  return handle;
}

void UnregisterCommDomain(int64_t handle) {
  auto& registry = TheRegistry();
  std::unique_lock lock(registry.mutex);
  registry.domains.erase(handle);
}

// Few domains are live at once (one per running distributed call), so a linear search is enough.
std::optional<CommPlace> FindCommPlace(uintptr_t address) {
  auto& registry = TheRegistry();
  std::shared_lock lock(registry.mutex);
  for (const auto& [handle, domain] : registry.domains) {
    for (size_t rank = 0; rank < domain->windows.size(); ++rank) {
      const uintptr_t base = domain->windows[rank];
      if (base == 0) continue;  // another process's window
      if (address >= base && address < base + domain->window_bytes)
        return CommPlace{domain, static_cast<int32_t>(rank), address - base};
    }
  }
  return std::nullopt;
}

}  // namespace pypto::rt
