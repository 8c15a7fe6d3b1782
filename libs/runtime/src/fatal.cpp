// Fatal error codes and their one-line rendering.
#include "pypto/runtime/fatal.h"

#include <fmt/format.h>

namespace pypto::rt {

const char* FatalCodeName(FatalCode code) {
  switch (code) {
    case FatalCode::None: return "None";
    case FatalCode::ScopeDeadlock: return "ScopeDeadlock";
    case FatalCode::HeapRingDeadlock: return "HeapRingDeadlock";
    case FatalCode::FlowControlDeadlock: return "FlowControlDeadlock";
    case FatalCode::DepPoolOverflow: return "DepPoolOverflow";
    case FatalCode::InvalidArgs: return "InvalidArgs";
    case FatalCode::KernelFailed: return "KernelFailed";
    case FatalCode::RequireSyncStartInvalid: return "RequireSyncStartInvalid";
    case FatalCode::SchedulerTimeout: return "SchedulerTimeout";
    case FatalCode::TensorWaitTimeout: return "TensorWaitTimeout";
    case FatalCode::OutOfMemory: return "OutOfMemory";
    case FatalCode::Internal: return "Internal";
    case FatalCode::Interrupted: return "Interrupted";
  }
  return "Unknown";
}

std::string FatalError::str() const {
  return fmt::format("fatal error {} ({}): {}", static_cast<int32_t>(code), FatalCodeName(code), message);
}

}  // namespace pypto::rt
