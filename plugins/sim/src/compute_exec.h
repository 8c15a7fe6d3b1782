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

// FP16 (Widen::Half) or BF16 (Widen::BFloat) elements widened to FP32 exactly, and FP32 values rounded
// back to nearest even.
std::vector<float> WidenFloats(Widen from, const std::byte* src, int64_t bytes);
void NarrowFloats(Widen to, std::byte* dst, const std::vector<float>& values);

// 8- or 16-bit integer elements widened to INT32 (sign- or zero-extended by `from`), and INT32 values
// narrowed to their low bits: the arithmetic of those tiles computes in between (see Widen).
std::vector<int32_t> WidenInts(Widen from, const std::byte* src, int64_t bytes);
void NarrowInts(Widen to, std::byte* dst, const std::vector<int32_t>& values);

// How an op computes on `dtype` tiles: Half, BFloat, I8, U8, I16, U16, or None for the types the kernels
// take directly (and those without arithmetic).
Widen WidenOf(ir::DataType dtype);

// `regs` is the kernel's register file (scalar operands read from it).
pypto::expected<void, rt::FatalError> RunCompute(const DecodedKernel& kernel, size_t index, CoreMemory& memory,
                                                 const int64_t* regs);

}  // namespace pypto::sim
