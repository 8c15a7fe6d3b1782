// Rows of 13 elements (not a multiple of 32 bytes) through DataCopyPad: into UB, each row padded on
// the right to 16 elements with -1 (DataCopyPadExtParams), then out twice: whole padded rows into
// `padded`, and the 13 data elements of each row into `tight` (UB rows stay 32-byte aligned).
#pragma once
#include "args.h"

constexpr uint16_t kRows = 4;
constexpr uint32_t kCols = 13;
constexpr uint32_t kPadded = 16;

extern "C" __global__ __aicore__ void kernel_entry(__gm__ int64_t* args) {
  using namespace AscendC;
  GlobalTensor<ELEM> x, padded, tight;
  x.SetGlobalBuffer(TensorArg<ELEM>(args, 0));
  padded.SetGlobalBuffer(TensorArg<ELEM>(args, 1));
  tight.SetGlobalBuffer(TensorArg<ELEM>(args, 2));
  TPipe pipe;
  TQue<TPosition::VECIN, 1> in;
  pipe.InitBuffer(in, 1, kRows * 32 * sizeof(float));
  LocalTensor<ELEM> rows = in.AllocTensor<ELEM>();
  // float: 52-byte rows become 64-byte UB rows (3 pad elements); half: 26 bytes -> 32 (3 again).
  DataCopyPad(rows, x, DataCopyExtParams(kRows, kCols * sizeof(ELEM), 0, 0, 0),
              DataCopyPadExtParams<ELEM>(true, 0, kPadded - kCols, static_cast<ELEM>(-1.0f)));
  in.EnQue(rows);
  rows = in.DeQue<ELEM>();
  SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);  // a VECIN queue orders MTE2 before V; the copies out are MTE3
  WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
  const uint32_t ub_row = (kPadded * sizeof(ELEM) + 31) / 32 * 32;
  const uint32_t gap = (ub_row - kPadded * sizeof(ELEM)) / 32;
  DataCopyPad(padded, rows, DataCopyExtParams(kRows, kPadded * sizeof(ELEM), gap, 0, 0));
  DataCopyPad(tight, rows, DataCopyExtParams(kRows, kCols * sizeof(ELEM), 0, 0, 0));
  in.FreeTensor(rows);
}
