// Finding what a hand-written kernel wrote, which the simulator cannot watch as it runs: a copy of its
// tensors' views before it runs, compared with them after. A write of the value a byte already held
// is not seen, and a write another core makes meanwhile is counted as the kernel's, so callers run
// the kernels they compare one at a time (lane_race.h, block_race.h).
#pragma once

#include <cstdint>
#include <vector>

#include "pypto/runtime/chip_tensor.h"
#include "sim_kernel.h"

namespace pypto::sim {

// Per tensor slot of args[]: the bytes of its view, or the byte ranges changed in it.
using TensorBytes = std::vector<std::vector<uint8_t>>;
using TensorChanges = std::vector<std::vector<rt::ByteRange>>;

TensorBytes SnapshotTensors(const DecodedKernel& kernel, const int64_t* args);
// Whole elements that differ from `before`, as address ranges, coalesced.
TensorChanges ChangedTensors(const DecodedKernel& kernel, const int64_t* args, const TensorBytes& before);
// The bytes of every tensor view of args[] together (what a snapshot costs).
uint64_t TensorViewBytes(const DecodedKernel& kernel, const int64_t* args);

}  // namespace pypto::sim
