// Seed 002, section 5: SyncAll uses the FFTS flag ids 11 to 14; a kernel's own cross-core flag on one of
// them collides with it. Built as both members of a mixed kernel; the vector core shows the trap.
#include "args.h"

extern "C" __global__ __aicore__ void kernel_entry(__gm__ int64_t* args) {
  using namespace AscendC;
#ifdef __DAV_C220_VEC__
  CrossCoreSetFlag<0x2, PIPE_MTE3>(11);
  SyncAll<false>();
#endif
}
