// Test kernel: records in its first row which device macros its build defined, as numbers a test
// can read back: [0] the core variant (220 for __DAV_C220_VEC__, 221 for __DAV_C220_CUBE__, 310 /
// 311 for the A5 ones, 0 for none), [1] the family macro (220 or 310), [2] pto-isa's __DAV_VEC__.
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
  __gm__ ChipTensor* out_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
  __gm__ float* out = reinterpret_cast<__gm__ float*>(out_tensor->buffer.addr) + out_tensor->start_offset;
#if defined(__DAV_C220_VEC__)
  out[0] = 220;
#elif defined(__DAV_C220_CUBE__)
  out[0] = 221;
#elif defined(__DAV_C310_VEC__)
  out[0] = 310;
#elif defined(__DAV_C310_CUBE__)
  out[0] = 311;
#else
  out[0] = 0;
#endif
#if defined(__DAV_C220__)
  out[1] = 220;
#elif defined(__DAV_C310__)
  out[1] = 310;
#else
  out[1] = 0;
#endif
#if defined(__DAV_VEC__)
  out[2] = 1;
#else
  out[2] = 0;
#endif
}
