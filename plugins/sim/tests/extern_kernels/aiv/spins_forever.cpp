// Test kernel: sets the flag args[1] points at (an int of the test's, outside any tensor: the kernel's
// tensor writes reach the caller only when it returns), so that the test knows it runs, then never
// returns.
#include <cstdint>

#include "tensor.h"

extern "C" void kernel_entry(int64_t* args) {
  ChipTensor* out_tensor = reinterpret_cast<ChipTensor*>(args[0]);
  volatile float* out = reinterpret_cast<float*>(out_tensor->buffer.addr) + out_tensor->start_offset;
  *reinterpret_cast<volatile int*>(args[1]) = 1;
  for (;;) out[1] = out[1] + 1.0f;
}
