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
  for (int32_t i = 0; i < kCols; ++i) row.SetValue(i, row.GetValue(i) + 1.0f);
  DataCopy(stage[block * kCols], row, kCols);
  SyncAll();
  DataCopy(row, stage[((block + 1) % blocks) * kCols], kCols);
  DataCopy(out[block * kCols], row, kCols);
}
