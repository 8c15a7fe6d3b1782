// Communication domains of distributed programs: the windows of a domain's ranks, one per rank, of
// one size and one layout (a buffer lies at the same offset in each). A comm op of a chip kernel
// finds its domain from the address of the window tensor it was handed, and reaches a peer's copy
// of a region at the same offset in the peer's window. On the simulator every rank's window is
// memory of this process; the host registers a domain for the length of a run.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace pypto::rt {

struct CommDomain {
  std::vector<uintptr_t> windows;  // base address of each rank's window, by rank
  uint64_t window_bytes = 0;
};

// Where an address lies: the domain and the rank whose window holds it.
struct CommPlace {
  std::shared_ptr<const CommDomain> domain;
  int32_t rank = 0;
  uint64_t offset = 0;  // from the start of the rank's window

  int32_t nranks() const { return static_cast<int32_t>(domain->windows.size()); }
  // The same offset in `peer`'s window.
  uintptr_t PeerAddress(int32_t peer) const { return domain->windows[static_cast<size_t>(peer)] + offset; }
};

// Registers a domain; the handle unregisters it. Windows of live domains must not overlap.
int64_t RegisterCommDomain(CommDomain domain);
void UnregisterCommDomain(int64_t handle);

// The domain and rank whose window holds `address` (nullopt when none does).
std::optional<CommPlace> FindCommPlace(uintptr_t address);

}  // namespace pypto::rt
