// Two queues whose buffers together pass the vector core's UB: the second InitBuffer must fail.
#include "args.h"

extern "C" __global__ __aicore__ void kernel_entry(__gm__ int64_t* args) {
  using namespace AscendC;
  TPipe pipe;
  TQue<TPosition::VECIN, 2> in;
  TQue<TPosition::VECOUT, 2> out;
  pipe.InitBuffer(in, 2, 64 * 1024);
  pipe.InitBuffer(out, 2, 64 * 1024);
}
