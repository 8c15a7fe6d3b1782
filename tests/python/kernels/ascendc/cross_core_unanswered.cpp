// A vector lane waits for a flag the cube never raises (the cube raises flag 2, the lanes wait for 3):
// on the device the block hangs; the simulator fails the run naming each member's state.
#include "args.h"

extern "C" __global__ __aicore__ void kernel_entry(__gm__ int64_t* args) {
  using namespace AscendC;
  if ASCEND_IS_AIC {
    CrossCoreSetFlag<0x2, PIPE_FIX>(2);
  }
  if ASCEND_IS_AIV {
    CrossCoreWaitFlag(3);
    TensorArg<float>(args, 0)[GetSubBlockIdx()] = 1.0f;
  }
}
