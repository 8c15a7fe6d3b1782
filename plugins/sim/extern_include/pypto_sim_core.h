// What the simulator tells a hand-written kernel about the core it runs on, for interfaces that take
// no args[] (AscendC's GetBlockIdx(), its TPipe over the core's UB, SyncAll(); pto-isa's TASSIGN into
// UB, L1 and L0). A kernel library that
// needs it defines `extern "C" void pypto_sim_bind_core(const PyptoSimCore*)`; the simulator calls it
// on the kernel's thread right before each kernel_entry, and the pointer stays valid until that entry
// returns. Plain C, so that both sides read the same layout; `abi` changes with it.
#ifndef PYPTO_SIM_EXTERN_CORE_H_
#define PYPTO_SIM_EXTERN_CORE_H_

#include <stdint.h>

#define PYPTO_SIM_CORE_ABI 5
#define PYPTO_SIM_BIND_CORE_SYMBOL "pypto_sim_bind_core"

struct PyptoSimCore {
  uint32_t abi;          // PYPTO_SIM_CORE_ABI
  int32_t core_type;     // 0: AIC (cube), 1: AIV (vector), as the runtime numbers them
  int32_t core_index;    // the logical core within its type
  int32_t in_mixed_task;  // 1 when the core runs one member of a mixed (cube + vector) task's block
  int64_t* args;         // the task's args[], as kernel_entry receives it
  unsigned char* ub;     // the core's unified buffer (AIV only; null on the cube)
  int64_t ub_bytes;      // its physical size: 192 KiB on A2/A3 (SocSpec ub_bytes + ub_reserved_bytes)
  void* host;            // the simulator's state for the callbacks below
  // Returns once every block of the task has reached the same barrier: 0, or nonzero when it never
  // can (the run has failed; the kernel must return at once and the simulator reports why).
  int32_t (*sync_all)(void* host);
  // The cube's buffers (AIC only; null on a vector core), each the simulator's own for this core and
  // sized by the SoC table: L1, L0A, L0B, L0C and the bias table. Since ABI 2.
  unsigned char* l1;
  int64_t l1_bytes;
  unsigned char* l0a;
  int64_t l0a_bytes;
  unsigned char* l0b;
  int64_t l0b_bytes;
  unsigned char* l0c;
  int64_t l0c_bytes;
  unsigned char* bias;
  int64_t bias_bytes;
  // Reports `message` (which starts with the kernel's "file:line: ") as a warning of this kernel's run:
  // something the device may do differently while the simulator computed the right value. The
  // simulator reports each kernel and line once. Since ABI 3 (with in_mixed_task).
  void (*warn)(void* host, const char* message);
  // The cross-core flags of a mixed task's block (AscendC CrossCoreSetFlag / CrossCoreWaitFlag): raise
  // flag `id` with FFTS mode `mode`, or wait for a raise of it and consume it. `call` ("file:line:
  // CrossCoreWaitFlag(3)") names the kernel's call in a diagnosis. 0, or nonzero when the runtime
  // refused or the wait can never end (the kernel must return at once). Since ABI 4.
  int32_t (*cross_core_set)(void* host, int32_t id, int32_t mode, const char* call);
  int32_t (*cross_core_wait)(void* host, int32_t id, const char* call);
  // sync_all with the kernel's call ("file:line: SyncAll<false>()"), which a diagnosis of a barrier
  // that can never complete names. In a mixed task the barrier is among every member (cube and vector)
  // of every block. Since ABI 5.
  int32_t (*sync_all_at)(void* host, const char* call);
};

typedef void (*PyptoSimBindCore)(const struct PyptoSimCore*);

#endif  // PYPTO_SIM_EXTERN_CORE_H_
