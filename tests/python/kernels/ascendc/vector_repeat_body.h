// The mask + repeatTimes + repeat-parameter forms, one per row of `out` (kRow elements each, zeroed
// first). kLanes elements make one repeat (256 bytes), kPerBlock one 32-byte block. The test
// computes the same walks over x and y in torch.
#pragma once
#include "args.h"

constexpr int32_t kIn = 512;
constexpr int32_t kRow = 256;
constexpr int32_t kRows = 15;
constexpr int32_t kLanes = 256 / sizeof(ELEM);
constexpr int32_t kPerBlock = 32 / sizeof(ELEM);

extern "C" __global__ __aicore__ void kernel_entry(__gm__ int64_t* args) {
  using namespace AscendC;
  GlobalTensor<ELEM> x_gm, y_gm, out_gm;
  x_gm.SetGlobalBuffer(TensorArg<ELEM>(args, 0));
  y_gm.SetGlobalBuffer(TensorArg<ELEM>(args, 1));
  out_gm.SetGlobalBuffer(TensorArg<ELEM>(args, 2));

  TPipe pipe;
  TBuf<TPosition::VECCALC> inputs, results, bits;
  pipe.InitBuffer(inputs, 2 * kIn * sizeof(ELEM));
  pipe.InitBuffer(results, kRows * kRow * sizeof(ELEM));
  pipe.InitBuffer(bits, 64);
  LocalTensor<ELEM> x = inputs.GetWithOffset<ELEM>(kIn, 0);
  LocalTensor<ELEM> y = inputs.GetWithOffset<ELEM>(kIn, kIn * sizeof(ELEM));
  LocalTensor<ELEM> out = results.Get<ELEM>();
  LocalTensor<uint8_t> mask = bits.Get<uint8_t>();
  DataCopy(x, x_gm, kIn);
  DataCopy(y, y_gm, kIn);
  SetFlag<HardEvent::MTE2_V>(EVENT_ID0);  // the vector instructions below read x and y
  WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
  Duplicate(out, 0.0f, kRows * kRow);

  const BinaryRepeatParams dense;
  const UnaryRepeatParams unary;
  // 0: the first 40 lanes of two repeats.
  Add(out[0 * kRow], x, y, 40, 2, dense);
  // 1: a bit mask (alternate nibbles of lanes).
  const uint64_t nibbles[2] = {0xF0F0F0F0F0F0F0F0ull, 0x0F0F0F0F0F0F0F0Full};
  Mul(out[1 * kRow], x, y, nibbles, 2, dense);
  // 2: src0 skips every other repeat (repeat stride 16 blocks).
  Sub(out[2 * kRow], x, y, kLanes, 2, BinaryRepeatParams(1, 1, 1, 8, 16, 8));
  // 3: one repeat whose blocks land every other block of dst.
  Adds(out[3 * kRow], x, 1.0f, kLanes, 1, UnaryRepeatParams(2, 1, 16, 8));
  // 4: counter mode, 100 elements, the mask set outside the instruction.
  SetMaskCount();
  SetVectorMask<ELEM, MaskMode::COUNTER>(100);
  Add<ELEM, false>(out[4 * kRow], x, y, MASK_PLACEHOLDER, 1, dense);
  SetMaskNorm();
  ResetMask();
  // 5: Duplicate, 24 lanes of two repeats.
  Duplicate(out[5 * kRow], 2.0f, 24, 2, 1, 8);
  // 6..9: reductions per block and per repeat.
  BlockReduceSum(out[6 * kRow], x, 2, kLanes, 1, 1, 8);
  WholeReduceSum(out[7 * kRow], x, kLanes, 2, 1, 1, 8);
  WholeReduceMax(out[8 * kRow], y, kLanes, 2, 1, 1, 8, ReduceOrder::ORDER_ONLY_VALUE);
  BlockReduceMax(out[9 * kRow], y, 2, kLanes, 1, 1, 8);
  // 10: Brcb of x[0..16) into 16 blocks.
  Brcb(out[10 * kRow], x, 2, BrcbRepeatParams(1, 8));
  // 11: Exp of the first 40 lanes of one repeat.
  Exp(out[11 * kRow], y, 40, 1, unary);
  // 12: min(x, y) through Compare and Select with repeats.
  Compare(mask, x, y, CMPMODE::LT, kLanes, 2, dense);
  Select(out[12 * kRow], mask, x, y, SELMODE::VSEL_TENSOR_TENSOR_MODE, kLanes, 2, dense);

  // 13: Copy of the first 40 lanes of each repeat, the source one repeat (8 blocks) further on.
  Copy(out[13 * kRow], x[kLanes], 40, 2, CopyRepeatParams(1, 1, 8, 8));
  // 14: scalar helpers.
  out.SetValue(14 * kRow + 0, static_cast<ELEM>(ToFloat(bfloat16_t(1.5f))));
  out.SetValue(14 * kRow + 1, static_cast<ELEM>(Std::min<int32_t>(4, 9)));
  out.SetValue(14 * kRow + 2, static_cast<ELEM>(Std::max(2.0f, 5.0f)));

  PipeBarrier<PIPE_ALL>();
  DataCopy(out_gm, out, kRows * kRow);
}
