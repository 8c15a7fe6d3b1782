// The flags between the cube and the vector cores of one block of a mixed kernel (CrossCoreSetFlag /
// CrossCoreWaitFlag) and the core-type constants kernels branch on. A flag is the runtime's
// cross-core event of the block (libs/runtime MixedBlock, as for the DSL's pl.system.sync_set /
// sync_wait): mode 2 raised by the cube reaches each vector lane, and the cube receives one once
// every lane raised it; mode 1 is between the vector lanes; a wait consumes one raise. A wait that
// no member of the block can ever answer fails the run at once, naming each member's state, instead
// of hanging.
#ifndef PYPTO_SIM_ASCENDC_CROSS_CORE_H_
#define PYPTO_SIM_ASCENDC_CROSS_CORE_H_

#include <cstdint>
#include <string>

#include "ascendc/core_context.h"
#include "ascendc/sync.h"

namespace AscendC {

inline constexpr int32_t MIX = 0;
inline constexpr int32_t AIC = 1;
inline constexpr int32_t AIV = 2;

}  // namespace AscendC

// The core type a kernel is compiled for, as CCEC sets it per core of a split (cube/vector) build.
#if defined(__DAV_CUBE__) || defined(__DAV_C220_CUBE__)
inline constexpr int32_t g_coreType = AscendC::AIC;
#else
inline constexpr int32_t g_coreType = AscendC::AIV;
#endif
#define ASCEND_IS_AIV (g_coreType == AscendC::AIV)
#define ASCEND_IS_AIC (g_coreType == AscendC::AIC)
#define ASCEND_IS_NOT_AIV (g_coreType != AscendC::AIV)
#define ASCEND_IS_NOT_AIC (g_coreType != AscendC::AIC)

namespace AscendC {

namespace detail {

// A2/A3's FFTS flags: ids 0 to 15, counters of up to 15 pending raises.
inline constexpr int32_t kCrossCoreFlags = 16;

inline std::string CrossCoreCall(const char* what, int32_t id, SourceLine where) {
  return std::string(where.file) + ":" + std::to_string(where.line) + ": " + what + "(" + std::to_string(id) + ")";
}

inline const PyptoSimCore& CrossCoreCore(const char* what, int32_t id, SourceLine where) {
  const PyptoSimCore& core = Core(where);
  if (id < 0 || id >= kCrossCoreFlags)
    Fail(std::string(what) + ": flag id " + std::to_string(id) + " is out of range; A2/A3 have cross-core flag ids 0 "
                                                                  "to 15",
         where);
  if (core.abi < 4 || !core.cross_core_set)
    Fail(std::string(what) + ": this simulator offers no cross-core flags (PyptoSimCore ABI " +
             std::to_string(core.abi) + "; they need ABI 4)",
         where);
  return core;
}

}  // namespace detail

// Raises flag `flagId` for the peer cores `modeId` names (0: every core of the type in the launch,
// which the simulator refuses; 1: the vector lanes of the block; 2: cube <-> vector lanes). `pipe` is
// the pipe whose work must be done first; the simulator runs a core in program order, so it is.
template <uint8_t modeId, pipe_t pipe>
inline void CrossCoreSetFlag(uint16_t flagId, detail::SourceLine where = detail::SourceLine::Here()) {
  const PyptoSimCore& core = detail::CrossCoreCore("CrossCoreSetFlag", flagId, where);
  detail::CheckCrossCoreFlagId("CrossCoreSetFlag", flagId, where);
  const std::string call = detail::CrossCoreCall("CrossCoreSetFlag", flagId, where);
  if (core.cross_core_set(core.host, flagId, modeId, call.c_str()) != 0)
    detail::Fail("CrossCoreSetFlag: the runtime refused the flag", where);
}

// Waits until a raise of flag `flagId` is pending for this core, and consumes it.
template <uint8_t modeId = 0, pipe_t pipe = PIPE_S>
inline void CrossCoreWaitFlag(uint16_t flagId, detail::SourceLine where = detail::SourceLine::Here()) {
  const PyptoSimCore& core = detail::CrossCoreCore("CrossCoreWaitFlag", flagId, where);
  detail::CheckCrossCoreFlagId("CrossCoreWaitFlag", flagId, where);
  const std::string call = detail::CrossCoreCall("CrossCoreWaitFlag", flagId, where);
  if (core.cross_core_wait(core.host, flagId, call.c_str()) != 0)
    detail::Fail("CrossCoreWaitFlag: the runtime's wait gave up", where);
}

}  // namespace AscendC

#endif  // PYPTO_SIM_ASCENDC_CROSS_CORE_H_
