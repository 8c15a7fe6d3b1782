// Seed 002's pipe hazard: x arrives in UB by DataCopy (MTE2) and Add (V) reads it with no
// SetFlag/WaitFlag<HardEvent::MTE2_V> between them. Right here, where pipes run in program order; a
// race on the device. out = x + x.
#include "args.h"

constexpr int32_t kN = 64;

extern "C" __global__ __aicore__ void kernel_entry(__gm__ int64_t* args) {
  using namespace AscendC;
  GlobalTensor<float> x_gm, out_gm;
  x_gm.SetGlobalBuffer(TensorArg<float>(args, 0));
  out_gm.SetGlobalBuffer(TensorArg<float>(args, 1));
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 2 * kN * sizeof(float));
  LocalTensor<float> x = buf.Get<float>();
  LocalTensor<float> sum = x[kN];
  DataCopy(x, x_gm, kN);
  Add(sum, x, x, kN);
  SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
  WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
  DataCopy(out_gm, sum, kN);
}
