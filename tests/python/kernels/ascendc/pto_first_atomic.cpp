// pto-isa's interface included before AscendC's: the simulator's one bind hook still starts each task of
// AscendC afresh. Each block copies its row of x into out and leaves SetAtomicAdd on (as a kernel that
// forgets SetAtomicNone does); the next task on the same core must start without it, as on the device.
#include "pto/pto-inst.hpp"
#include "args.h"

constexpr int32_t kCols = 8;

extern "C" __global__ __aicore__ void kernel_entry(__gm__ int64_t* args) {
  using namespace AscendC;
  const int64_t block = GetBlockIdx();
  GlobalTensor<float> x, out;
  x.SetGlobalBuffer(TensorArg<float>(args, 0));
  out.SetGlobalBuffer(TensorArg<float>(args, 1));
  TPipe pipe;
  TQue<TPosition::VECIN, 1> in;
  pipe.InitBuffer(in, 1, kCols * sizeof(float));
  LocalTensor<float> row = in.AllocTensor<float>();
  DataCopy(row, x[block * kCols], kCols);
  in.EnQue(row);
  row = in.DeQue<float>();
  SetFlag<HardEvent::MTE2_MTE3>(0);
  WaitFlag<HardEvent::MTE2_MTE3>(0);
  DataCopy(out[block * kCols], row, kCols);
  in.FreeTensor(row);
  SetAtomicAdd<float>();
}
