// A DeQue with nothing enqueued: on the device the vector core waits forever.
#include "args.h"

extern "C" __global__ __aicore__ void kernel_entry(__gm__ int64_t* args) {
  using namespace AscendC;
  TPipe pipe;
  TQue<TPosition::VECIN, 1> in;
  pipe.InitBuffer(in, 1, 1024);
  LocalTensor<float> t = in.AllocTensor<float>();
  t = in.DeQue<float>();
}
