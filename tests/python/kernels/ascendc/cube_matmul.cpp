// The cube path of AscendC, as an attention kernel's QK or PV step uses it: A[M][K] and B[K][N]
// (half, row-major in GM) into L1 in NZ order by DataCopy with Nd2NzParams, into L0A (LoadData2D
// per row of fractals) and L0B (transposing LoadData2D per K block), Mmad into L0C, and Fixpipe to
// GM twice: row-major float (CFG_ROW_MAJOR) and NZ half (CFG_NZ, F322F16). A's L1 copy is also
// written back as it lies (args[3]), so that a test sees the NZ order.
// args: a, b, c (float M x N), a_nz (half, L1 image of A), c_nz (half, NZ image of C).
#include "args.h"

constexpr uint32_t M = 20, K = 40, N = 24;
constexpr uint32_t kM16 = 32, kK16 = 48, kN16 = 32;  // padded to 16

extern "C" __global__ __aicore__ void kernel_entry(__gm__ int64_t* args) {
  using namespace AscendC;
  GlobalTensor<half> a, b, a_nz, c_nz;
  GlobalTensor<float> c;
  a.SetGlobalBuffer(TensorArg<half>(args, 0));
  b.SetGlobalBuffer(TensorArg<half>(args, 1));
  c.SetGlobalBuffer(TensorArg<float>(args, 2));
  a_nz.SetGlobalBuffer(TensorArg<half>(args, 3));
  c_nz.SetGlobalBuffer(TensorArg<half>(args, 4));

  TPipe pipe;
  TBuf<TPosition::A1> a_l1;
  TBuf<TPosition::B1> b_l1;
  TBuf<TPosition::A2> a_l0;
  TBuf<TPosition::B2> b_l0;
  TBuf<TPosition::CO1> c_l0;
  pipe.InitBuffer(a_l1, kM16 * kK16 * sizeof(half));
  pipe.InitBuffer(b_l1, kK16 * kN16 * sizeof(half));
  pipe.InitBuffer(a_l0, kM16 * kK16 * sizeof(half));
  pipe.InitBuffer(b_l0, kK16 * kN16 * sizeof(half));
  pipe.InitBuffer(c_l0, kM16 * kN16 * sizeof(float));
  LocalTensor<half> a1 = a_l1.Get<half>(), b1 = b_l1.Get<half>(), a0 = a_l0.Get<half>(), b0 = b_l0.Get<half>();
  LocalTensor<float> c0 = c_l0.Get<float>();

  // ND -> NZ: row r's k-th 16-element block at r + k * (rows padded to 16) blocks.
  DataCopy(a1, a, Nd2NzParams(1, M, K, 0, K, kM16, 1, 0));
  DataCopy(b1, b, Nd2NzParams(1, K, N, 0, N, kK16, 1, 0));
  SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
  WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
  DataCopy(a_nz, a1, kM16 * kK16);

  // L0A: row block i of A, its K/16 fractals one after the other (zZ).
  for (uint32_t i = 0; i < kM16 / 16; ++i)
    LoadData(a0[i * kK16 * 16], a1[i * 256], LoadData2DParams(0, kK16 / 16, kM16 / 16, 0, 0, false, 0));
  // L0B: K block i of B, its N/16 fractals transposed.
  for (uint32_t i = 0; i < kK16 / 16; ++i)
    LoadData(b0[i * kN16 * 16], b1[i * 256], LoadData2DParams(0, kN16 / 16, kK16 / 16, 0, 0, true, 0));
  SetFlag<HardEvent::MTE1_M>(EVENT_ID0);
  WaitFlag<HardEvent::MTE1_M>(EVENT_ID0);

  MmadParams mmad;
  mmad.m = M;
  mmad.n = N;
  mmad.k = K;
  Mmad(c0, a0, b0, mmad);
  SetFlag<HardEvent::M_FIX>(EVENT_ID0);
  WaitFlag<HardEvent::M_FIX>(EVENT_ID0);

  FixpipeParamsV220 row_major(N, M, kM16, N, false);
  Fixpipe<float, float, CFG_ROW_MAJOR>(c, c0, row_major);
  FixpipeParamsV220 nz(N, M, kM16, kM16, false);  // column blocks of C are kM16 32-byte blocks apart
  nz.quantPre = QuantMode_t::F322F16;
  Fixpipe<half, float, CFG_NZ>(c_nz, c0, nz);
}
