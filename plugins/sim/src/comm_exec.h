// The communication instructions of distributed chip kernels (Opcode::Comm, and the peer of a remote
// Load/Store). A window tensor's communication domain is found from its address
// (rt::FindCommPlace): the host registered the ranks' windows for the run, all in this process.
#pragma once

#include <cstdint>

#include "pypto/runtime/chip_tensor.h"
#include "pypto/runtime/fatal.h"
#include "pypto/support/expected.h"
#include "sim_kernel.h"

namespace pypto::sim {

// Runs Comm instruction `index`; `offsets` are its signal cell's (Notify, Wait).
pypto::expected<void, rt::FatalError> RunComm(const DecodedKernel& kernel, size_t index, const int64_t* args,
                                              const int64_t* offsets, int64_t* regs);

// The descriptor a remote Load/Store moves data through: the kernel's window tensor, moved to the
// peer's window (same offset, same layout).
pypto::expected<rt::ChipTensor, rt::FatalError> PeerTensor(const DecodedKernel& kernel, size_t index,
                                                           const int64_t* args, const int64_t* regs);

}  // namespace pypto::sim
