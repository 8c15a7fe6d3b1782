// Synchronization between a core's pipes and between cores. The simulator runs a core's pipes in
// program order on one thread, so SetFlag/WaitFlag and PipeBarrier order nothing here; they check
// what the device would reject (an event id out of range). SyncAll waits at the runtime's barrier for
// every block of the task.
#ifndef PYPTO_SIM_ASCENDC_SYNC_H_
#define PYPTO_SIM_ASCENDC_SYNC_H_

#include <cstdint>
#include <string>

#include "ascendc/core_context.h"
#include "pto/sync.h"  // pipe_t, event_t: the CCE builtins pto-isa kernels name too

namespace AscendC {

enum class HardEvent : uint8_t {
  MTE2_MTE1,
  MTE1_MTE2,
  MTE1_M,
  M_MTE1,
  MTE2_V,
  V_MTE2,
  MTE3_V,
  V_MTE3,
  M_V,
  V_M,
  V_V,
  MTE3_MTE1,
  MTE1_MTE3,
  MTE1_V,
  MTE2_M,
  M_MTE2,
  V_MTE1,
  M_FIX,
  FIX_M,
  MTE3_MTE2,
  MTE2_MTE3,
  S_V,
  V_S,
  S_MTE2,
  MTE2_S,
  S_MTE3,
  MTE3_S,
  MTE2_FIX,
  FIX_MTE2,
  FIX_S,
  M_S,
  FIX_MTE3,
  MTE1_FIX,
  FIX_MTE1,
  FIX_FIX,
  MAX,
};

using TEventID = int8_t;

namespace detail {

// A2/A3 give each pair of pipes eight event flags.
inline constexpr int32_t kEventIds = 8;

inline void CheckEventId(const char* what, int32_t id, SourceLine where) {
  if (id < 0 || id >= kEventIds)
    Fail(std::string(what) + ": event id " + std::to_string(id) + " is out of range; A2/A3 have event ids 0 to " +
             std::to_string(kEventIds - 1) + " (EVENT_ID0..EVENT_ID7) per pair of pipes",
         where);
}

}  // namespace detail

template <HardEvent event>
inline void SetFlag(int32_t id, detail::SourceLine where = detail::SourceLine::Here()) {
  detail::CheckEventId("SetFlag", id, where);
}
template <HardEvent event>
inline void WaitFlag(int32_t id, detail::SourceLine where = detail::SourceLine::Here()) {
  detail::CheckEventId("WaitFlag", id, where);
}

template <pipe_t pipe>
inline void PipeBarrier() {}

// Every block of the task reaches this point before any goes on.
template <bool isAIVOnly = true>
inline void SyncAll(detail::SourceLine where = detail::SourceLine::Here()) {
  const PyptoSimCore& core = detail::Core(where);
  if (core.sync_all(core.host) != 0) detail::Fail("SyncAll: the runtime's barrier gave up", where);
}

}  // namespace AscendC

#endif  // PYPTO_SIM_ASCENDC_SYNC_H_
