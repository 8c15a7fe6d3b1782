// The communication instructions of distributed chip kernels (Opcode::Comm, and the peer of a remote
// Load/Store). A window tensor's communication domain is found from its address
// (rt::FindCommPlace): the host registered the ranks' windows for the run, all in this process
// (the thread backend) or this rank's only, the peers reached through the domain's transport (MPI).
#pragma once

#include <cstdint>
#include <functional>

#include "pypto/runtime/chip_tensor.h"
#include "pypto/runtime/fatal.h"
#include "pypto/support/expected.h"
#include "sim_kernel.h"

namespace pypto::sim {

// Runs Comm instruction `index`; `offsets` are its signal cell's (Notify, Wait).
pypto::expected<void, rt::FatalError> RunComm(const DecodedKernel& kernel, size_t index, const int64_t* args,
                                              const int64_t* offsets, int64_t* regs);

// Runs remote Load/Store `index` (the transfer, given the argument slots it should use) on the
// peer's copy of the window region (same offset, same layout): in place when the peer's window is
// memory of this process, through a local staging of the bytes it touches when the peer is another
// process (fetched before a load; after a store, the bytes it wrote put, or for an atomic store
// added, into the peer's window). `offsets` is the region's origin.
pypto::expected<void, rt::FatalError> RunRemoteTransfer(
    const DecodedKernel& kernel, size_t index, const int64_t* args, const int64_t* regs, const int64_t* offsets,
    const std::function<pypto::expected<void, rt::FatalError>(const int64_t*)>& transfer);

}  // namespace pypto::sim
