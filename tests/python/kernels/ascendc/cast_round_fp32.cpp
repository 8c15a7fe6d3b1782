// Cast of FP32 x under each RoundMode: to INT32 (rows: RINT, FLOOR, CEIL, TRUNC, ROUND), to FP16
// (rows: RINT, TRUNC, FLOOR, CEIL, ODD), and FP16 back to FP32 (exact) in the repeat form.
#include "args.h"

constexpr int32_t kN = 256;

extern "C" __global__ __aicore__ void kernel_entry(__gm__ int64_t* args) {
  using namespace AscendC;
  GlobalTensor<float> x_gm, back_gm;
  GlobalTensor<int32_t> ints_gm;
  GlobalTensor<half> halves_gm;
  x_gm.SetGlobalBuffer(TensorArg<float>(args, 0));
  ints_gm.SetGlobalBuffer(TensorArg<int32_t>(args, 1));
  halves_gm.SetGlobalBuffer(TensorArg<half>(args, 2));
  back_gm.SetGlobalBuffer(TensorArg<float>(args, 3));

  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, kN * 4 + 5 * kN * 4 + 5 * kN * 2 + kN * 4);
  LocalTensor<float> x = buf.GetWithOffset<float>(kN, 0);
  LocalTensor<int32_t> ints = buf.GetWithOffset<int32_t>(5 * kN, kN * 4);
  LocalTensor<half> halves = buf.GetWithOffset<half>(5 * kN, 6 * kN * 4);
  LocalTensor<float> back = buf.GetWithOffset<float>(kN, 6 * kN * 4 + 5 * kN * 2);
  DataCopy(x, x_gm, kN);

  const RoundMode to_int[] = {RoundMode::CAST_RINT, RoundMode::CAST_FLOOR, RoundMode::CAST_CEIL,
                              RoundMode::CAST_TRUNC, RoundMode::CAST_ROUND};
  for (int i = 0; i < 5; ++i) Cast(ints[i * kN], x, to_int[i], kN);
  const RoundMode to_half[] = {RoundMode::CAST_RINT, RoundMode::CAST_TRUNC, RoundMode::CAST_FLOOR,
                               RoundMode::CAST_CEIL, RoundMode::CAST_ODD};
  for (int i = 0; i < 5; ++i) Cast(halves[i * kN], x, to_half[i], kN);
  // 64 lanes per repeat (the float side); the half side's repeat is 4 blocks.
  Cast(back, halves, RoundMode::CAST_NONE, 64, kN / 64, UnaryRepeatParams(1, 1, 8, 4));

  DataCopy(ints_gm, ints, 5 * kN);
  DataCopy(halves_gm, halves, 5 * kN);
  DataCopy(back_gm, back, kN);
}
