// Test kernel: block b of N writes `base + b` into row b of `out` ([N, 8] FP32), and N into its last
// element. args[0] is the tensor (its scalar comes first in the signature, but tensors take the first
// slots), args[1] the scalar `base`.
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "../common/row_width.h"
#include "intrinsic.h"
#include "tensor.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
  __gm__ ChipTensor* out_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
  __gm__ float* out = reinterpret_cast<__gm__ float*>(out_tensor->buffer.addr) + out_tensor->start_offset;
  const int64_t base = args[1];
  const int32_t block = get_block_idx(args);
  for (int32_t j = 0; j < kRowWidth - 1; ++j) out[block * kRowWidth + j] = static_cast<float>(base + block);
  out[block * kRowWidth + kRowWidth - 1] = static_cast<float>(get_block_num(args));
  dcci(out, 0, 0);
}
