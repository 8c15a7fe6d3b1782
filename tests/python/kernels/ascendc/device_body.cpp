// A kernel written as pypto-lib's CCE kernels are: an empty entry under __CPU_SIM (upstream's
// simulator cannot run device code), the real body otherwise, which reaches AscendC through CANN 9's
// header names and the runtime's descriptor through task_interface/buffer.h.
#include <cstdint>

#include "tensor.h"

#ifdef __CPU_SIM
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) { (void)args; }
#else

#include "basic_api/kernel_basic_intf.h"
#include "kernel_vec_intf.h"
#include "kernel_cube_intf.h"
#include "kernel_operator_list_tensor_intf.h"
#include "adv_api/pad/broadcast.h"
#include "adv_api/reduce/reduce.h"
#include "utils/std/algorithm.h"
#include "intrinsic.h"

#if __has_include("task_interface/buffer.h")
using RuntimeTensor = ChipTensor;
#else
using RuntimeTensor = Tensor;
#endif

__host_aicore__ inline uint32_t Rows() { return AscendC::Std::max(4u, 2u); }

// out[r][c] = x[r][c] + rowsum(x[r]) for a 4 x 8 FP32 tensor, on one block.
extern "C" __global__ __aicore__ void kernel_entry(__gm__ int64_t* args) {
  using namespace AscendC;
  auto* x_desc = reinterpret_cast<__gm__ RuntimeTensor*>(args[0]);
  auto* out_desc = reinterpret_cast<__gm__ RuntimeTensor*>(args[1]);
  dcci(reinterpret_cast<__gm__ void*>(x_desc), SINGLE_CACHE_LINE, CACHELINE_OUT);
  dsb(DSB_DDR);
  GlobalTensor<float> x, out;
  x.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x_desc->buffer.addr) + x_desc->start_offset);
  out.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out_desc->buffer.addr) + out_desc->start_offset);
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  GetTPipePtr()->InitBuffer(buf, 3 * 32 * sizeof(float));
  LocalTensor<float> t = buf.Get<float>();
  LocalTensor<float> sums = t[32];
  LocalTensor<float> wide = t[64];
  DataCopy(t, x, 32);
  SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
  WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
  const uint32_t shape[] = {Rows(), 8};
  ReduceSum<float, Pattern::Reduce::AR>(sums, t, shape, false);
  const uint32_t wide_shape[] = {Rows(), 8}, column_shape[] = {Rows(), 1};
  BroadCast<float, 2, 1>(wide, sums, wide_shape, column_shape);
  Add(t, t, wide, 32);
  SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
  WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
  DataCopy(out, t, 32);
}

#endif
