// Where a hand-written kernel finds out which block it is. The runtime puts a pointer to the task's
// local context at args[48] and to the core's global context at args[49] (libs/runtime runtime.h:
// kLocalContextSlot, kGlobalContextSlot, LocalContext, GlobalContext); these read them.
#ifndef PYPTO_SIM_EXTERN_INTRINSIC_H_
#define PYPTO_SIM_EXTERN_INTRINSIC_H_

#include <cstdint>

#include "pto/address_spaces.h"
#include "pto/sync.h"  // dcci, dsb: the cache maintenance CCE kernels call next to these

#define PYPTO_SIM_LOCAL_CONTEXT_SLOT 48
#define PYPTO_SIM_GLOBAL_CONTEXT_SLOT 49

struct PyptoSimLocalContext {
  int32_t block_idx;
  int32_t block_num;
};
struct PyptoSimGlobalContext {
  int32_t sub_block_id;
};

inline int32_t get_block_idx(__gm__ int64_t* args) {
  return reinterpret_cast<const PyptoSimLocalContext*>(args[PYPTO_SIM_LOCAL_CONTEXT_SLOT])->block_idx;
}
inline int32_t get_block_num(__gm__ int64_t* args) {
  return reinterpret_cast<const PyptoSimLocalContext*>(args[PYPTO_SIM_LOCAL_CONTEXT_SLOT])->block_num;
}
inline int32_t get_sub_block_id(__gm__ int64_t* args) {
  return reinterpret_cast<const PyptoSimGlobalContext*>(args[PYPTO_SIM_GLOBAL_CONTEXT_SLOT])->sub_block_id;
}

#endif  // PYPTO_SIM_EXTERN_INTRINSIC_H_
