// The body of cube_load3d*.cpp: LoadData with LoadData3DParamsV2 (img2col) bringing A into L0A. A[M][K]
// (half) lies in L1 in NZ order, which for a 1 x 1 filter is the NC1HWC0 feature map of M = l1H x l1W
// positions and K channels. Two matmuls with B: the whole of A (positions 0.., channels
// 0..), and a window of it (positions 16.., channels 16..) times the matching rows of B.
// args: a (M x K), b (K x N), c (float M x N) = A B, c_win (float 16 x N) = A[16:32, 16:48] B[16:48, :].
// The includer sets kFilter, the filter's side: 1, or 3 for an img2col the simulator does not model.
#pragma once
#include "args.h"

constexpr uint32_t M = 32, K = 48, N = 32;
constexpr uint16_t kH = 2, kW = 16;  // the M positions as a feature map
constexpr uint16_t kWinM = 16, kWinK = 32;

extern "C" __global__ __aicore__ void kernel_entry(__gm__ int64_t* args) {
  using namespace AscendC;
  GlobalTensor<half> a, b;
  GlobalTensor<float> c, c_win;
  a.SetGlobalBuffer(TensorArg<half>(args, 0));
  b.SetGlobalBuffer(TensorArg<half>(args, 1));
  c.SetGlobalBuffer(TensorArg<float>(args, 2));
  c_win.SetGlobalBuffer(TensorArg<float>(args, 3));

  TPipe pipe;
  TBuf<TPosition::A1> a_l1;
  TBuf<TPosition::B1> b_l1;
  TBuf<TPosition::A2> a_l0;
  TBuf<TPosition::B2> b_l0;
  TBuf<TPosition::CO1> c_l0;
  pipe.InitBuffer(a_l1, M * K * sizeof(half));
  pipe.InitBuffer(b_l1, K * N * sizeof(half));
  pipe.InitBuffer(a_l0, M * K * sizeof(half));
  pipe.InitBuffer(b_l0, K * N * sizeof(half));
  pipe.InitBuffer(c_l0, M * N * sizeof(float));
  LocalTensor<half> a1 = a_l1.Get<half>(), b1 = b_l1.Get<half>(), a0 = a_l0.Get<half>(), b0 = b_l0.Get<half>();
  LocalTensor<float> c0 = c_l0.Get<float>();

  DataCopy(a1, a, Nd2NzParams(1, M, K, 0, K, M, 1, 0));  // channel block k at k * M positions of 16
  DataCopy(b1, b, Nd2NzParams(1, K, N, 0, N, K, 1, 0));
  SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
  WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);

  const auto matmul = [&](uint16_t m_start, uint16_t m_ext, uint16_t k_start, uint16_t k_ext,
                          const GlobalTensor<float>& out) {
    LoadData3DParamsV2<half> img2col;
    img2col.l1H = kH;
    img2col.l1W = kW;
    img2col.channelSize = K;
    img2col.mStartPt = m_start;
    img2col.mExtension = m_ext;
    img2col.kStartPt = k_start;
    img2col.kExtension = k_ext;
    img2col.filterW = img2col.filterH = kFilter;
    LoadData(a0, a1, img2col);
    // L0B: K blocks k_start / 16.. of B, each its N / 16 fractals transposed.
    for (uint32_t i = 0; i < k_ext / 16u; ++i)
      LoadData(b0[i * N * 16], b1[(k_start / 16u + i) * 256], LoadData2DParams(0, N / 16, K / 16, 0, 0, true, 0));
    SetFlag<HardEvent::MTE1_M>(EVENT_ID0);
    WaitFlag<HardEvent::MTE1_M>(EVENT_ID0);
    MmadParams mmad;
    mmad.m = m_ext;
    mmad.n = N;
    mmad.k = k_ext;
    Mmad(c0, a0, b0, mmad);
    SetFlag<HardEvent::M_FIX>(EVENT_ID0);
    WaitFlag<HardEvent::M_FIX>(EVENT_ID0);
    Fixpipe<float, float, CFG_ROW_MAJOR>(out, c0, FixpipeParamsV220(N, m_ext, m_ext, N, false));
    SetFlag<HardEvent::FIX_M>(EVENT_ID0);  // the next Mmad overwrites L0C
    WaitFlag<HardEvent::FIX_M>(EVENT_ID0);
    SetFlag<HardEvent::M_MTE1>(EVENT_ID0);  // the next loads overwrite L0A and L0B
    WaitFlag<HardEvent::M_MTE1>(EVENT_ID0);
  };
  matmul(0, M, 0, K, c);
  matmul(kWinM, M - kWinM, 16, kWinK, c_win);
}
