// Each block writes its own row of `stage`, waits for every block at SyncAll, then copies the next
// block's row into `out`: only right when the barrier held.
#include "args.h"

constexpr int32_t kCols = 64;

extern "C" __global__ __aicore__ void kernel_entry(__gm__ int64_t* args) {
  using namespace AscendC;
  const int64_t block = GetBlockIdx(), blocks = GetBlockNum();
  GlobalTensor<float> x, stage, out;
  x.SetGlobalBuffer(TensorArg<float>(args, 0));
  out.SetGlobalBuffer(TensorArg<float>(args, 1));
  stage.SetGlobalBuffer(TensorArg<float>(args, 2));
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, kCols * sizeof(float));
  LocalTensor<float> row = buf.Get<float>();
  DataCopy(row, x[block * kCols], kCols);
  SetFlag<HardEvent::MTE2_S>(EVENT_ID0);  // the scalar unit reads what MTE2 brought in
  WaitFlag<HardEvent::MTE2_S>(EVENT_ID0);
  for (int32_t i = 0; i < kCols; ++i) row.SetValue(i, row.GetValue(i) + 1.0f);
  SetFlag<HardEvent::S_MTE3>(EVENT_ID0);  // and MTE3 copies out what it wrote
  WaitFlag<HardEvent::S_MTE3>(EVENT_ID0);
  DataCopy(stage[block * kCols], row, kCols);
  SyncAll();
  DataCopy(row, stage[((block + 1) % blocks) * kCols], kCols);
  SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
  WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
  DataCopy(out[block * kCols], row, kCols);
}
