// Test kernel: sets out[0] to 1, so that the test knows it runs, then never returns.
#include <cstdint>

#include "tensor.h"

extern "C" void kernel_entry(int64_t* args) {
  ChipTensor* out_tensor = reinterpret_cast<ChipTensor*>(args[0]);
  volatile float* out = reinterpret_cast<float*>(out_tensor->buffer.addr) + out_tensor->start_offset;
  out[0] = 1.0f;
  for (;;) out[1] = out[1] + 1.0f;
}
