"""Hand-written kernels more than one test file runs."""

# A mixed kernel's members, over (a: [8, 8] FP32, out: [8, 8] FP32, flags: [4] FP32) on 4 blocks.
# AIC: flags[block] = 100 + block.
MIXED_AIC = """
#include <cstdint>
#include "tensor.h"
#include "intrinsic.h"
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
  __gm__ ChipTensor* f = reinterpret_cast<__gm__ ChipTensor*>(args[2]);
  __gm__ float* flags = reinterpret_cast<__gm__ float*>(f->buffer.addr) + f->start_offset;
  flags[get_block_idx(args)] = 100.0f + get_block_idx(args);
}
"""

# AIV: block b, lane l owns row 2b + l: out[row] = a[row] * 2 + l.
MIXED_AIV = """
#include <cstdint>
#include "tensor.h"
#include "intrinsic.h"
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
  __gm__ ChipTensor* at = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
  __gm__ ChipTensor* ot = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
  const __gm__ float* a = reinterpret_cast<__gm__ float*>(at->buffer.addr) + at->start_offset;
  __gm__ float* out = reinterpret_cast<__gm__ float*>(ot->buffer.addr) + ot->start_offset;
  const int32_t lane = get_sub_block_id(args);
  const int32_t row = get_block_idx(args) * 2 + lane;
  for (int j = 0; j < 8; ++j) out[row * 8 + j] = a[row * 8 + j] * 2.0f + lane;
}
"""
