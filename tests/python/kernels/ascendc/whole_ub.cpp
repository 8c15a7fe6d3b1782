// The Qwen3 attention's way of taking the core's memories: a TPipe, every position's TBuf built
// through GetTPipePtr() (L1 and L0 on a vector core too), the whole 192 KiB of UB as one TBuf, then
// the TPipe destroyed and the UB used. out[i] = x[i] + 1, staged at the top of UB.
#include "args.h"

constexpr int32_t kN = 256;
constexpr uint32_t kUb = 192 * 1024;

extern "C" __global__ __aicore__ void kernel_entry(__gm__ int64_t* args) {
  using namespace AscendC;
  TPipe pipe;
  TBuf<TPosition::A1> l1;
  TBuf<TPosition::A2> l0a;
  TBuf<TPosition::CO1> l0c;
  TBuf<TPosition::VECCALC> ub;
  GetTPipePtr()->InitBuffer(l1, 512 * 1024);
  GetTPipePtr()->InitBuffer(l0a, 64 * 1024);
  GetTPipePtr()->InitBuffer(l0c, 128 * 1024);
  GetTPipePtr()->InitBuffer(ub, kUb);
  pipe.Destroy();

  GlobalTensor<float> x, out;
  x.SetGlobalBuffer(TensorArg<float>(args, 0));
  out.SetGlobalBuffer(TensorArg<float>(args, 1));
  LocalTensor<float> top = ub.GetWithOffset<float>(kN, kUb - kN * sizeof(float));
  DataCopy(top, x, kN);
  SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
  WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
  Adds(top, top, 1.0f, kN);
  SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
  WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
  DataCopy(out, top, kN);
}
