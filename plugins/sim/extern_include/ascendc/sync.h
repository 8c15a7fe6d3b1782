// Synchronization between a core's pipes and between cores. The simulator runs a core's pipes in
// program order on one thread, so SetFlag/WaitFlag and PipeBarrier order nothing here; they check
// what the device would reject (an event id out of range). SyncAll waits at the runtime's barrier for
// every block of the task, after checking the two SyncAll traps of seed 002 (section 5): the vector-only
// SyncAll() in a mixed kernel, which never releases the cube, and a kernel's own cross-core flag on one
// of the FFTS flag ids SyncAll uses (CheckCrossCoreFlagId, called by CrossCoreSetFlag/WaitFlag).
#ifndef PYPTO_SIM_ASCENDC_SYNC_H_
#define PYPTO_SIM_ASCENDC_SYNC_H_

#include <cstdint>
#include <mutex>
#include <string>

#include "ascendc/core_context.h"
#include "ascendc/pipe_order.h"
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

// The pipes an event orders: its source's work before its destination's.
struct EventPipes {
  Pipe src, dst;
};

inline constexpr EventPipes PipesOf(HardEvent event) {
  switch (event) {
    case HardEvent::MTE2_MTE1: return {Pipe::MTE2, Pipe::MTE1};
    case HardEvent::MTE1_MTE2: return {Pipe::MTE1, Pipe::MTE2};
    case HardEvent::MTE1_M: return {Pipe::MTE1, Pipe::M};
    case HardEvent::M_MTE1: return {Pipe::M, Pipe::MTE1};
    case HardEvent::MTE2_V: return {Pipe::MTE2, Pipe::V};
    case HardEvent::V_MTE2: return {Pipe::V, Pipe::MTE2};
    case HardEvent::MTE3_V: return {Pipe::MTE3, Pipe::V};
    case HardEvent::V_MTE3: return {Pipe::V, Pipe::MTE3};
    case HardEvent::M_V: return {Pipe::M, Pipe::V};
    case HardEvent::V_M: return {Pipe::V, Pipe::M};
    case HardEvent::V_V: return {Pipe::V, Pipe::V};
    case HardEvent::MTE3_MTE1: return {Pipe::MTE3, Pipe::MTE1};
    case HardEvent::MTE1_MTE3: return {Pipe::MTE1, Pipe::MTE3};
    case HardEvent::MTE1_V: return {Pipe::MTE1, Pipe::V};
    case HardEvent::MTE2_M: return {Pipe::MTE2, Pipe::M};
    case HardEvent::M_MTE2: return {Pipe::M, Pipe::MTE2};
    case HardEvent::V_MTE1: return {Pipe::V, Pipe::MTE1};
    case HardEvent::M_FIX: return {Pipe::M, Pipe::FIX};
    case HardEvent::FIX_M: return {Pipe::FIX, Pipe::M};
    case HardEvent::MTE3_MTE2: return {Pipe::MTE3, Pipe::MTE2};
    case HardEvent::MTE2_MTE3: return {Pipe::MTE2, Pipe::MTE3};
    case HardEvent::S_V: return {Pipe::S, Pipe::V};
    case HardEvent::V_S: return {Pipe::V, Pipe::S};
    case HardEvent::S_MTE2: return {Pipe::S, Pipe::MTE2};
    case HardEvent::MTE2_S: return {Pipe::MTE2, Pipe::S};
    case HardEvent::S_MTE3: return {Pipe::S, Pipe::MTE3};
    case HardEvent::MTE3_S: return {Pipe::MTE3, Pipe::S};
    case HardEvent::MTE2_FIX: return {Pipe::MTE2, Pipe::FIX};
    case HardEvent::FIX_MTE2: return {Pipe::FIX, Pipe::MTE2};
    case HardEvent::FIX_S: return {Pipe::FIX, Pipe::S};
    case HardEvent::M_S: return {Pipe::M, Pipe::S};
    case HardEvent::FIX_MTE3: return {Pipe::FIX, Pipe::MTE3};
    case HardEvent::MTE1_FIX: return {Pipe::MTE1, Pipe::FIX};
    case HardEvent::FIX_MTE1: return {Pipe::FIX, Pipe::MTE1};
    case HardEvent::FIX_FIX: return {Pipe::FIX, Pipe::FIX};
    case HardEvent::MAX: break;
  }
  return {Pipe::S, Pipe::S};
}

}  // namespace detail

template <HardEvent event>
inline void SetFlag(int32_t id, detail::SourceLine where = detail::SourceLine::Here()) {
  detail::CheckEventId("SetFlag", id, where);
  detail::PipeSignal(detail::PipesOf(event).src, detail::PipesOf(event).dst, id);
}
template <HardEvent event>
inline void WaitFlag(int32_t id, detail::SourceLine where = detail::SourceLine::Here()) {
  detail::CheckEventId("WaitFlag", id, where);
  detail::PipeAwait(detail::PipesOf(event).src, detail::PipesOf(event).dst, id);
}

// Orders a pipe after its own earlier work, which program order here already does; PIPE_ALL orders
// every pipe after all earlier work.
template <pipe_t pipe>
inline void PipeBarrier() {
  if (pipe == PIPE_ALL) detail::PipeBarrierAll();
}

namespace detail {

// SyncAll's hardware implementation signals on FFTS flag ids 11 to 14.
inline constexpr int32_t kSyncAllFirstFlag = 11, kSyncAllLastFlag = 14;

// Where this kernel (its shared object, every core and task alike) called SyncAll and set or waited
// on a cross-core flag in SyncAll's range: either may come first in program order or on another
// core, and whichever call finds the other reports the collision at the cross-core flag's line.
struct SyncAllFlagUse {
  std::mutex mu;
  bool sync_all = false;
  SourceLine sync_all_at{};
  bool flag = false;
  SourceLine flag_at{};
  const char* flag_call = "";
  int32_t flag_id = 0;
};

// Hidden, so that each kernel's shared object keeps its own (a default-visibility inline function's
// static is one object for the whole process, shared by every kernel loaded).
__attribute__((visibility("hidden"))) inline SyncAllFlagUse& FlagUse() {
  static SyncAllFlagUse use;
  return use;
}

[[noreturn]] inline void FailFlagCollision(const SyncAllFlagUse& use) {
  Fail(std::string(use.flag_call) + ": flag id " + std::to_string(use.flag_id) +
           " is one of the FFTS flag ids 11 to 14 that SyncAll uses, and this kernel calls SyncAll (at " +
           use.sync_all_at.file + ":" + std::to_string(use.sync_all_at.line) +
           "): on the device the two signal each other's waits. Use flag ids 0 to 10 or 15 for the kernel's own "
           "cross-core flags",
       use.flag_at);
}

// For CrossCoreSetFlag/CrossCoreWaitFlag (`what` names the call): fails when `flag_id` is one SyncAll
// uses and the kernel calls SyncAll, before or after this call.
inline void CheckCrossCoreFlagId(const char* what, int32_t flag_id, SourceLine where) {
  if (flag_id < kSyncAllFirstFlag || flag_id > kSyncAllLastFlag) return;
  SyncAllFlagUse& use = FlagUse();
  std::lock_guard lock(use.mu);
  if (!use.flag) {
    use.flag = true;
    use.flag_at = where;
    use.flag_call = what;
    use.flag_id = flag_id;
  }
  if (use.sync_all) FailFlagCollision(use);
}

inline void NoteSyncAll(SourceLine where) {
  SyncAllFlagUse& use = FlagUse();
  std::lock_guard lock(use.mu);
  if (!use.sync_all) {
    use.sync_all = true;
    use.sync_all_at = where;
  }
  if (use.flag) FailFlagCollision(use);
}

}  // namespace detail

// Every block of the task reaches this point before any goes on; in a mixed kernel (isAIVOnly =
// false) every member, cube and vector, of every block. isAIVOnly = true (the default) is the vector
// cores' barrier only: in a mixed kernel the device never releases the cube cores from it, so the
// simulator refuses it there instead of hanging.
template <bool isAIVOnly = true>
inline void SyncAll(detail::SourceLine where = detail::SourceLine::Here()) {
  const PyptoSimCore& core = detail::Core(where);
  if (isAIVOnly && core.abi >= 3 && core.in_mixed_task)
    detail::Fail(std::string("SyncAll() synchronizes the vector cores only (isAIVOnly = true, its default), and this "
                             "is a mixed kernel: on the device the cube cores are never released from it and the "
                             "task hangs (507018). Use SyncAll<false>() for the barrier of all cube and vector "
                             "cores (this ") + (core.core_type == 0 ? "cube (AIC)" : "vector (AIV)") + " core called it)",
                 where);
  detail::NoteSyncAll(where);
  detail::PipeBarrierAll();  // the device's SyncAll starts with PipeBarrier<PIPE_ALL>
  const std::string call =
      std::string(where.file) + ":" + std::to_string(where.line) + (isAIVOnly ? ": SyncAll()" : ": SyncAll<false>()");
  const int32_t gave_up = core.abi >= 5 ? core.sync_all_at(core.host, call.c_str()) : core.sync_all(core.host);
  if (gave_up != 0) detail::Fail("SyncAll: the runtime's barrier gave up", where);
}

}  // namespace AscendC

#endif  // PYPTO_SIM_ASCENDC_SYNC_H_
