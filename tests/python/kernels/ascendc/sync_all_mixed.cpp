// SyncAll<false>() is the barrier of every cube and vector core of a mixed kernel (seed 002, section
// 5: the fix for the vector-only SyncAll()). Each block's cube writes its slot of `stage`; after the
// barrier each vector lane reads the next block's slot, which another block's cube wrote.
// args: out (float, 2 per block), stage (float, 1 per block).
#include "args.h"

extern "C" __global__ __aicore__ void kernel_entry(__gm__ int64_t* args) {
  using namespace AscendC;
  __gm__ float* out = TensorArg<float>(args, 0);
  __gm__ float* stage = TensorArg<float>(args, 1);
  const int64_t block = GetBlockIdx();
  if ASCEND_IS_AIC {
    stage[block] = 10.0f * static_cast<float>(block + 1);
  }
  SyncAll<false>();
  if ASCEND_IS_AIV {
    const int64_t next = (block + 1) % GetBlockNum();
    out[block * 2 + GetSubBlockIdx()] = stage[next] + static_cast<float>(GetSubBlockIdx());
  }
}
