// Two L1 queues on the cube whose buffers together pass its L1 (512 KiB on A2/A3): the second
// InitBuffer must fail, as UB's does on a vector core (ub_overflow.cpp).
#include "args.h"

extern "C" __global__ __aicore__ void kernel_entry(__gm__ int64_t* args) {
  using namespace AscendC;
  TPipe pipe;
  TQue<TPosition::A1, 1> a;
  TQue<TPosition::B1, 2> b;
  pipe.InitBuffer(a, 1, 256 * 1024);
  pipe.InitBuffer(b, 2, 192 * 1024);
}
