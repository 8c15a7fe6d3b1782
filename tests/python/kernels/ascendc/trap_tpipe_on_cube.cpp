// Seed 002, section 3: a vector-only phase's TPipe created on both cores "to be symmetric". On the cube
// it drags the core into the vector cores' UB setup; the fix guards it with #ifdef __DAV_C220_VEC__.
// Built as both members of a mixed kernel.
#include "args.h"

extern "C" __global__ __aicore__ void kernel_entry(__gm__ int64_t* args) {
  using namespace AscendC;
  TPipe pipe;
  TBuf<TPosition::VECCALC> scratch;
  pipe.InitBuffer(scratch, 256 * sizeof(float));
  LocalTensor<float> zeros = scratch.Get<float>();
  Duplicate(zeros, 0.0f, 256);
}
