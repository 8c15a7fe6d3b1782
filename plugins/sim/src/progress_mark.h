// A running kernel's progress mark for the runtime's stall watchdog (rt::CoreExecutor::ProgressMark):
// a digest of what the kernel can change, taken from the watchdog's thread while the kernel runs.
// A kernel that computes changes its core's buffers (every tile op writes one) or its tensors; one
// that spins on a flag in global memory, a home-made barrier, or a loop that never ends changes
// neither, so two equal marks a scheduler timeout apart mean it makes no progress. Waiting on a peer
// rank (comm_exec.cpp) counts as progress: it has its own time limit ($PYPTO_SIM_COMM_TIMEOUT_S).
//
// The bytes are read while the kernel may write them: a torn read only makes two marks differ, which
// is taken for progress, never for a stall. At most kMaxTensorBytes of the tensors are read (their
// views in slot order), so a kernel whose only writes in a whole timeout land beyond them, in a
// launch whose tensors hold more, would be taken for stalled; its core's buffers are always read.
#pragma once

#include <cstdint>

#include "core_memory.h"
#include "sim_kernel.h"

namespace pypto::sim {

inline constexpr uint64_t kMaxTensorBytes = uint64_t{64} << 20;

uint64_t ProgressMark(const DecodedKernel& kernel, const int64_t* args, const CoreMemory& memory,
                      uint64_t peer_waits);

// Folds `bytes` bytes at `data` into the digest `hash` (FNV-1a over 8-byte words).
uint64_t DigestBytes(uint64_t hash, const std::byte* data, uint64_t bytes);

}  // namespace pypto::sim
