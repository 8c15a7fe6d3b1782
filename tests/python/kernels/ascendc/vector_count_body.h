// The count form of every vector family over N elements of x and y: row k of `out` holds result k
// (the order is the test's). Compare/Select go through a uint8_t bit mask in a TBuf.
#pragma once
#include "args.h"

constexpr int32_t kN = 512;
constexpr int32_t kResults = 20;

extern "C" __global__ __aicore__ void kernel_entry(__gm__ int64_t* args) {
  using namespace AscendC;
  GlobalTensor<ELEM> x_gm, y_gm, out_gm, reduced_gm;
  x_gm.SetGlobalBuffer(TensorArg<ELEM>(args, 0));
  y_gm.SetGlobalBuffer(TensorArg<ELEM>(args, 1));
  out_gm.SetGlobalBuffer(TensorArg<ELEM>(args, 2));
  reduced_gm.SetGlobalBuffer(TensorArg<ELEM>(args, 3));

  TPipe pipe;
  TBuf<TPosition::VECCALC> inputs, results, bits, reduced;
  pipe.InitBuffer(inputs, 2 * kN * sizeof(ELEM));
  pipe.InitBuffer(results, kResults * kN * sizeof(ELEM));
  pipe.InitBuffer(bits, kN / 8);
  pipe.InitBuffer(reduced, 32);
  LocalTensor<ELEM> x = inputs.GetWithOffset<ELEM>(kN, 0);
  LocalTensor<ELEM> y = inputs.GetWithOffset<ELEM>(kN, kN * sizeof(ELEM));
  LocalTensor<ELEM> out = results.Get<ELEM>();
  LocalTensor<uint8_t> mask = bits.Get<uint8_t>();
  LocalTensor<ELEM> sums = reduced.Get<ELEM>();
  DataCopy(x, x_gm, kN);
  DataCopy(y, y_gm, kN);
  SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
  WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);

  Add(out[0 * kN], x, y, kN);
  Sub(out[1 * kN], x, y, kN);
  Mul(out[2 * kN], x, y, kN);
  Div(out[3 * kN], x, y, kN);
  Max(out[4 * kN], x, y, kN);
  Min(out[5 * kN], x, y, kN);
  Adds(out[6 * kN], x, 0.5f, kN);
  Muls(out[7 * kN], x, 3.0f, kN);
  Maxs(out[8 * kN], y, 0.25f, kN);
  Mins(out[9 * kN], y, 0.25f, kN);
  Exp(out[10 * kN], y, kN);
  Ln(out[11 * kN], x, kN);
  Abs(out[12 * kN], y, kN);
  Sqrt(out[13 * kN], x, kN);
  Rsqrt(out[14 * kN], x, kN);
  Reciprocal(out[15 * kN], x, kN);
  Relu(out[16 * kN], y, kN);
  Duplicate(out[17 * kN], 1.5f, kN);
  Compare(mask, x, y, CMPMODE::GT, kN);
  Select(out[18 * kN], mask, x, y, SELMODE::VSEL_TENSOR_TENSOR_MODE, kN);
  CompareScalar(mask, y, 0.0f, CMPMODE::GT, kN);
  Select(out[19 * kN], mask, y, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, kN);

  Duplicate(sums, 0.0f, 32 / sizeof(ELEM));
  ReduceSum(sums[0], x, out[0], kN);
  ReduceMax(sums[1], y, out[0], kN);
  ReduceMin(sums[2], y, out[0], kN);

  SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
  WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
  DataCopy(out_gm, out, kResults * kN);
  DataCopy(reduced_gm, sums, 32 / sizeof(ELEM));
}
