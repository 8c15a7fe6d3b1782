// out = (x + y) * 2 over ROWS x COLS, one row per block: x and y through a VECIN queue of two
// buffers, the sum in a TBuf (element by element: this kernel is about the queues), the result
// through a VECOUT queue, with the flags the device needs.
#pragma once
#include "args.h"

constexpr int32_t kCols = 256;

extern "C" __global__ __aicore__ void kernel_entry(__gm__ int64_t* args) {
  using namespace AscendC;
  const int64_t row = GetBlockIdx();
  GlobalTensor<ELEM> x, y, out;
  x.SetGlobalBuffer(TensorArg<ELEM>(args, 0) + row * kCols, kCols);
  y.SetGlobalBuffer(TensorArg<ELEM>(args, 1) + row * kCols, kCols);
  out.SetGlobalBuffer(TensorArg<ELEM>(args, 2) + row * kCols, kCols);

  TPipe pipe;
  TQue<TPosition::VECIN, 2> in;
  TQue<TPosition::VECOUT, 1> result;
  TBuf<TPosition::VECCALC> scratch;
  pipe.InitBuffer(in, 2, kCols * sizeof(ELEM));
  pipe.InitBuffer(result, 1, kCols * sizeof(ELEM));
  pipe.InitBuffer(scratch, kCols * sizeof(ELEM));

  LocalTensor<ELEM> xs = in.AllocTensor<ELEM>();
  LocalTensor<ELEM> ys = in.AllocTensor<ELEM>();
  DataCopy(xs, x, kCols);
  DataCopy(ys, y, kCols);
  in.EnQue(xs);
  in.EnQue(ys);
  xs = in.DeQue<ELEM>();
  ys = in.DeQue<ELEM>();
  LocalTensor<ELEM> sum = scratch.Get<ELEM>();
  SetFlag<HardEvent::MTE2_S>(EVENT_ID1);
  WaitFlag<HardEvent::MTE2_S>(EVENT_ID1);
  for (int32_t i = 0; i < kCols; ++i) sum.SetValue(i, static_cast<ELEM>(static_cast<float>(xs.GetValue(i)) + ys[i].GetValue(0)));
  PipeBarrier<PIPE_V>();
  LocalTensor<ELEM> scaled = result.AllocTensor<ELEM>();
  for (int32_t i = 0; i < kCols; ++i) scaled(i) = static_cast<ELEM>(static_cast<float>(sum.GetValue(i)) * 2.0f);
  in.FreeTensor(xs);
  in.FreeTensor(ys);
  result.EnQue(scaled);
  scaled = result.DeQue<ELEM>();
  SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
  WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
  DataCopy(out, scaled, kCols);
  result.FreeTensor(scaled);
}
