// The cube's path for 32-bit operands, as the Qwen3 attention kernel loads float ones: A[16][16] and
// B[16][16] (float, row-major in GM) into L1 in NZ order (column blocks of 8), A into L0A by
// LoadData2DParams (its two 16 x 8 fractals in K order, zZ), B into L0B by LoadDataWithTranspose (one
// 16 x 16 square of two 16 x 8 fractals, written transposed as the K-block fractals L0B holds), Mmad
// and Fixpipe to GM row-major. args: a, b, c (float, 16 x 16 each).
#include "args.h"

constexpr uint32_t M = 16, K = 16, N = 16;

extern "C" __global__ __aicore__ void kernel_entry(__gm__ int64_t* args) {
  using namespace AscendC;
  GlobalTensor<float> a, b, c;
  a.SetGlobalBuffer(TensorArg<float>(args, 0));
  b.SetGlobalBuffer(TensorArg<float>(args, 1));
  c.SetGlobalBuffer(TensorArg<float>(args, 2));

  TPipe pipe;
  TBuf<TPosition::A1> a_l1;
  TBuf<TPosition::B1> b_l1;
  TBuf<TPosition::A2> a_l0;
  TBuf<TPosition::B2> b_l0;
  TBuf<TPosition::CO1> c_l0;
  pipe.InitBuffer(a_l1, M * K * sizeof(float));
  pipe.InitBuffer(b_l1, K * N * sizeof(float));
  pipe.InitBuffer(a_l0, M * K * sizeof(float));
  pipe.InitBuffer(b_l0, K * N * sizeof(float));
  pipe.InitBuffer(c_l0, M * N * sizeof(float));
  LocalTensor<float> a1 = a_l1.Get<float>(), b1 = b_l1.Get<float>(), a0 = a_l0.Get<float>(), b0 = b_l0.Get<float>();
  LocalTensor<float> c0 = c_l0.Get<float>();

  DataCopy(a1, a, Nd2NzParams(1, M, K, 0, K, M, 1, 0));
  DataCopy(b1, b, Nd2NzParams(1, K, N, 0, N, K, 1, 0));
  SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
  WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);

  LoadData(a0, a1, LoadData2DParams(0, K / 8, 1, 0, 0, false, 0));
  LoadDataWithTranspose(b0, b1, LoadData2dTransposeParams(0, 1, 1, 0, 0));
  SetFlag<HardEvent::MTE1_M>(EVENT_ID0);
  WaitFlag<HardEvent::MTE1_M>(EVENT_ID0);

  MmadParams mmad;
  mmad.m = M;
  mmad.n = N;
  mmad.k = K;
  Mmad(c0, a0, b0, mmad);
  SetFlag<HardEvent::M_FIX>(EVENT_ID0);
  WaitFlag<HardEvent::M_FIX>(EVENT_ID0);
  Fixpipe<float, float, CFG_ROW_MAJOR>(c, c0, FixpipeParamsV220(N, M, M, N, false));
}
