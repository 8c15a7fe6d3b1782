// A flag id past EVENT_ID7.
#include "args.h"

extern "C" __global__ __aicore__ void kernel_entry(__gm__ int64_t* args) {
  AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(8);
}
