// The left half of every row of x (ROWS x COLS) into UB as a dense block (DataCopyParams: 32-byte
// blocks, the right half skipped as srcStride), UB to UB, and back out: `left` gets the dense block,
// `out` the half rows at their place (dstStride skips the right half, which keeps its zeros).
#pragma once
#include "args.h"

constexpr uint16_t kRows = 8;
constexpr uint16_t kCols = 64;
constexpr uint16_t kHalfBlocks = kCols / 2 * sizeof(ELEM) / 32;  // half a row, in 32-byte blocks

extern "C" __global__ __aicore__ void kernel_entry(__gm__ int64_t* args) {
  using namespace AscendC;
  GlobalTensor<ELEM> x, left, out;
  x.SetGlobalBuffer(TensorArg<ELEM>(args, 0));
  left.SetGlobalBuffer(TensorArg<ELEM>(args, 1));
  out.SetGlobalBuffer(TensorArg<ELEM>(args, 2));
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 2 * kRows * kCols / 2 * sizeof(ELEM));
  LocalTensor<ELEM> dense = buf.GetWithOffset<ELEM>(kRows * kCols / 2, 0);
  LocalTensor<ELEM> copy = buf.GetWithOffset<ELEM>(kRows * kCols / 2, kRows * kCols / 2 * sizeof(ELEM));

  DataCopy(dense, x, DataCopyParams(kRows, kHalfBlocks, kHalfBlocks, 0));
  SetFlag<HardEvent::MTE2_V>(EVENT_ID0);  // the UB -> UB copy (V) reads what MTE2 brought in
  WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
  DataCopy(copy, dense, DataCopyParams(1, kRows * kHalfBlocks, 0, 0));
  SetFlag<HardEvent::V_MTE3>(EVENT_ID0);  // and the copies out (MTE3) read what it wrote
  WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
  DataCopy(left, copy, kRows * kCols / 2);
  DataCopy(out, copy, DataCopyParams(kRows, kHalfBlocks, 0, kHalfBlocks));
}
