// out[row] = 2 * w, where w is one row of a larger tensor passed as a view: its descriptor's
// start_offset says where the row begins. args: out (whole), w (view), row (scalar).
#include <cstdint>

#include "tensor.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
  auto* out_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
  auto* w_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
  __gm__ float* out = reinterpret_cast<__gm__ float*>(out_tensor->buffer.addr) + out_tensor->start_offset;
  const __gm__ float* w = reinterpret_cast<__gm__ float*>(w_tensor->buffer.addr) + w_tensor->start_offset;
  const int64_t row = args[2];
  for (int j = 0; j < 64; ++j) out[row * 64 + j] = 2.0f * w[j];
}
