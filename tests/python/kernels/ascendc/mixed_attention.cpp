// A small attention on one mixed block, as the paged-attention kernel splits it: the cube computes
// S = Q K^T into a GM workspace and raises flag 0; each vector lane waits for it, takes the softmax of
// its half of S's rows (scaled by 1/sqrt(D)) into P (half) and raises flag 1; the cube waits until
// both lanes did and computes O = P V. Both members are built from this file (ASCEND_IS_AIC).
// args: q [S][D], k [L][D], v [L][D] (half), o [S][D] (float), s_ws [S][L] (float), p_ws [S][L] (half).
#include <cmath>

#include "args.h"

constexpr uint32_t S = 16, D = 32, L = 32;
constexpr uint32_t kQkReady = 0, kSoftmaxReady = 1;

using namespace AscendC;

// C[m][n] = A[m][k] B[k][n] through L1/L0, A and B half and row-major in GM, B given as B (false) or
// as B^T (true: n rows of k, as K is for Q K^T). Sizes are multiples of 16.
template <uint32_t m, uint32_t k, uint32_t n, bool b_transposed>
void MatMul(TPipe& pipe, const GlobalTensor<half>& a, const GlobalTensor<half>& b, const GlobalTensor<float>& c) {
  pipe.Reset();
  TBuf<TPosition::A1> a_l1;
  TBuf<TPosition::B1> b_l1;
  TBuf<TPosition::A2> a_l0;
  TBuf<TPosition::B2> b_l0;
  TBuf<TPosition::CO1> c_l0;
  pipe.InitBuffer(a_l1, m * k * sizeof(half));
  pipe.InitBuffer(b_l1, k * n * sizeof(half));
  pipe.InitBuffer(a_l0, m * k * sizeof(half));
  pipe.InitBuffer(b_l0, k * n * sizeof(half));
  pipe.InitBuffer(c_l0, m * n * sizeof(float));
  LocalTensor<half> a1 = a_l1.Get<half>(), b1 = b_l1.Get<half>(), a0 = a_l0.Get<half>(), b0 = b_l0.Get<half>();
  LocalTensor<float> c0 = c_l0.Get<float>();
  DataCopy(a1, a, Nd2NzParams(1, m, k, 0, k, m, 1, 0));
  for (uint32_t i = 0; i < m / 16; ++i)
    LoadData(a0[i * k * 16], a1[i * 256], LoadData2DParams(0, k / 16, m / 16, 0, 0, false, 0));
  if constexpr (b_transposed) {
    // B^T [n][k] in NZ is already L0B's order: one run of all its fractals.
    DataCopy(b1, b, Nd2NzParams(1, n, k, 0, k, n, 1, 0));
    LoadData(b0, b1, LoadData2DParams(0, (k / 16) * (n / 16), 1, 0, 0, false, 0));
  } else {
    DataCopy(b1, b, Nd2NzParams(1, k, n, 0, n, k, 1, 0));
    for (uint32_t i = 0; i < k / 16; ++i)
      LoadData(b0[i * n * 16], b1[i * 256], LoadData2DParams(0, n / 16, k / 16, 0, 0, true, 0));
  }
  MmadParams mmad;
  mmad.m = m;
  mmad.n = n;
  mmad.k = k;
  Mmad(c0, a0, b0, mmad);
  Fixpipe<float, float, CFG_ROW_MAJOR>(c, c0, FixpipeParamsV220(n, m, m, n, false));
}

// Softmax of `rows` rows of S (from row `first`) into P.
void Softmax(TPipe& pipe, const GlobalTensor<float>& s, const GlobalTensor<half>& p, uint32_t first, uint32_t rows) {
  TBuf<TPosition::VECCALC> s_ub, row_ub, wide_ub, p_ub;
  pipe.InitBuffer(s_ub, rows * L * sizeof(float));
  pipe.InitBuffer(row_ub, rows * sizeof(float));
  pipe.InitBuffer(wide_ub, rows * L * sizeof(float));
  pipe.InitBuffer(p_ub, rows * L * sizeof(half));
  LocalTensor<float> x = s_ub.Get<float>(), row = row_ub.Get<float>(), wide = wide_ub.Get<float>();
  LocalTensor<half> out = p_ub.Get<half>();
  const uint32_t shape[] = {rows, L}, column[] = {rows, 1};
  DataCopy(x, s[first * L], rows * L);
  SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
  WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
  Muls(x, x, 1.0f / std::sqrt(static_cast<float>(D)), rows * L);
  ReduceMax<float, Pattern::Reduce::AR, false>(row, x, shape, true);
  BroadCast<float, 2, 1>(wide, row, shape, column);
  Sub(x, x, wide, rows * L);
  Exp(x, x, rows * L);
  ReduceSum<float, Pattern::Reduce::AR, false>(row, x, shape, true);
  BroadCast<float, 2, 1>(wide, row, shape, column);
  Div(x, x, wide, rows * L);
  Cast(out, x, RoundMode::CAST_RINT, rows * L);
  SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
  WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
  DataCopy(p[first * L], out, rows * L);
}

extern "C" __global__ __aicore__ void kernel_entry(__gm__ int64_t* args) {
  GlobalTensor<half> q, k, v, p_ws;
  GlobalTensor<float> o, s_ws;
  q.SetGlobalBuffer(TensorArg<half>(args, 0));
  k.SetGlobalBuffer(TensorArg<half>(args, 1));
  v.SetGlobalBuffer(TensorArg<half>(args, 2));
  o.SetGlobalBuffer(TensorArg<float>(args, 3));
  s_ws.SetGlobalBuffer(TensorArg<float>(args, 4));
  p_ws.SetGlobalBuffer(TensorArg<half>(args, 5));
  TPipe pipe;
  if ASCEND_IS_AIC {
    MatMul<S, D, L, true>(pipe, q, k, s_ws);
    CrossCoreSetFlag<0x2, PIPE_FIX>(kQkReady);
    CrossCoreWaitFlag(kSoftmaxReady);
    MatMul<S, L, D, false>(pipe, p_ws, v, o);
  }
  if ASCEND_IS_AIV {
    const uint32_t rows = S / GetSubBlockNum();
    CrossCoreWaitFlag(kQkReady);
    Softmax(pipe, s_ws, p_ws, GetSubBlockIdx() * rows, rows);
    CrossCoreSetFlag<0x2, PIPE_MTE3>(kSoftmaxReady);
  }
}
