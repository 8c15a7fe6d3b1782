// Runs one Compute instruction (every tile op other than loads, stores and the four basic
// element-wise ops) on a core's buffers.
#pragma once

#include <cstdint>

#include "core_memory.h"
#include "pypto/runtime/runtime.h"
#include "sim_kernel.h"

namespace pypto::sim {

// `regs` is the kernel's register file (scalar operands read from it).
pypto::expected<void, rt::FatalError> RunCompute(const DecodedKernel& kernel, size_t index, CoreMemory& memory,
                                                 const int64_t* regs);

}  // namespace pypto::sim
