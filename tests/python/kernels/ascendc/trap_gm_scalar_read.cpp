// Seed 002, section 4: a scalar read of an input the host wrote (`lens`), through GlobalTensor::GetValue.
// Right on the simulator, possibly stale on the device: the simulator warns. out[0] = lens[0] * 2.
#include "args.h"

extern "C" __global__ __aicore__ void kernel_entry(__gm__ int64_t* args) {
  using namespace AscendC;
  GlobalTensor<int32_t> lens, out;
  lens.SetGlobalBuffer(TensorArg<int32_t>(args, 0));
  out.SetGlobalBuffer(TensorArg<int32_t>(args, 1));
  for (int32_t i = 0; i < 8; ++i) out.SetValue(i, lens.GetValue(i) * 2);
}
