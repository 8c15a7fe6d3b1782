// Seed 002, section 5: SyncAll() is the vector cores' barrier (isAIVOnly = true); a mixed kernel that
// calls it never releases its cube. The fix is SyncAll<false>(). Built as both members of the kernel.
#include "args.h"

extern "C" __global__ __aicore__ void kernel_entry(__gm__ int64_t* args) {
#ifdef __DAV_C220_VEC__
  AscendC::SyncAll();
#endif
}
