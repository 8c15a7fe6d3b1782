// The device's pipeline and cache maintenance as a hand-written kernel spells it (CCE builtins, used
// bare by pto-isa kernels and by ptoas's output). The simulator runs a core's "pipelines" in program
// order on one thread over coherent memory, so every one of these is a no-op: a kernel whose
// set_flag/wait_flag pairing is wrong still computes the right numbers here.
#ifndef PYPTO_SIM_PTO_SYNC_H_
#define PYPTO_SIM_PTO_SYNC_H_

#include <cstdint>
#include <thread>

enum pipe_t : int {
  PIPE_S = 0,
  PIPE_V,
  PIPE_M,
  PIPE_MTE1,
  PIPE_MTE2,
  PIPE_MTE3,
  PIPE_ALL,
  PIPE_MTE4,
  PIPE_MTE5,
  PIPE_V2,
  PIPE_FIX,
};
enum event_t : int { EVENT_ID0 = 0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };

// dcci's operands: one line or the whole data cache, and what to do with it (write it out, ...).
enum cache_line_t : int { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE };
enum dcci_dst_t : int { CACHELINE_ALL = 0, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };
// dsb's operand: which memory operations to wait for.
enum mem_dsb_t : int { DSB_ALL = 0, DSB_DDR, DSB_UB, DSB_SEQ };

template <typename... Args>
inline void dcci(Args&&...) {}
template <typename... Args>
inline void pipe_barrier(Args&&...) {}
template <typename... Args>
inline void set_flag(Args&&...) {}
template <typename... Args>
inline void wait_flag(Args&&...) {}
// Nothing to wait for here; but a kernel spinning on GM for the other blocks (a software barrier)
// calls dcci and dsb in its loop, and on a host with fewer CPUs than simulated cores the cores it
// waits for need the CPU it spins on.
template <typename... Args>
inline void dsb(Args&&...) {
  std::this_thread::yield();
}
// The vector unit's mask registers: tile operations here always cover the tile's valid region.
inline void set_mask_norm() {}
inline void set_mask_count() {}
inline void set_vector_mask(uint64_t, uint64_t) {}

#endif  // PYPTO_SIM_PTO_SYNC_H_
