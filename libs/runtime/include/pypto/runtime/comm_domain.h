// Communication domains of distributed programs: the windows of a domain's ranks, one per rank, of
// one size and one layout (a buffer lies at the same offset in each). A comm op of a chip kernel
// finds its domain from the address of the window tensor it was handed, and reaches a peer's copy
// of a region at the same offset in the peer's window. With the thread backend every rank's window
// is memory of this process; with the MPI backend (comm_mpi.h) each process holds its own rank's
// window only and reaches the others through the domain's transport. The host registers a domain
// for the length of a run.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "pypto/runtime/comm_transport.h"

namespace pypto::rt {

struct CommDomain {
  // Base address of each rank's window, by rank; 0 for a window in another process.
  std::vector<uintptr_t> windows;
  uint64_t window_bytes = 0;
  // Null when every window is in this process; otherwise every comm op goes through it.
  std::shared_ptr<CommTransport> transport;
};

// Where an address lies: the domain and the rank whose window holds it.
struct CommPlace {
  std::shared_ptr<const CommDomain> domain;
  int32_t rank = 0;
  uint64_t offset = 0;  // from the start of the rank's window

  int32_t nranks() const { return static_cast<int32_t>(domain->windows.size()); }
  CommTransport* transport() const { return domain->transport.get(); }
  // The same offset in `peer`'s window (in-process domains only: without a transport).
  uintptr_t PeerAddress(int32_t peer) const { return domain->windows[static_cast<size_t>(peer)] + offset; }
};

// Registers a domain; the handle unregisters it. Windows of live domains must not overlap.
int64_t RegisterCommDomain(CommDomain domain);
void UnregisterCommDomain(int64_t handle);

// The domain and rank whose window holds `address` (nullopt when none does).
std::optional<CommPlace> FindCommPlace(uintptr_t address);

}  // namespace pypto::rt
