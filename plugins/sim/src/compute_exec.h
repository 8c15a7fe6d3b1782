// Runs one Compute instruction (every tile op other than loads, stores and the four basic
// element-wise ops) on a core's buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core_memory.h"
#include "pypto/runtime/runtime.h"
#include "sim_kernel.h"

namespace pypto::sim {

// FP16 elements widened to FP32 (exactly), and FP32 values rounded to FP16 elements (to nearest
// even): the element-wise ops on FP16 tiles compute in between.
std::vector<float> WidenHalf(const std::byte* src, int64_t bytes);
void NarrowToHalf(std::byte* dst, const std::vector<float>& values);

// `regs` is the kernel's register file (scalar operands read from it).
pypto::expected<void, rt::FatalError> RunCompute(const DecodedKernel& kernel, size_t index, CoreMemory& memory,
                                                 const int64_t* regs);

}  // namespace pypto::sim
