// Fatal error codes of a run, with their classes (as upstream's runtime reports them).
#pragma once

#include <cstdint>
#include <string>

namespace pypto::rt {

enum class FatalCode : int32_t {
  None = 0,
  InvalidArgs = 5,         // a malformed task (tensor after scalar, too many args, ...)
  KernelFailed = 6,        // a kernel reported an error or trapped
  SchedulerTimeout = 7,    // tasks can never complete (deadlock)
  DataAccessTimeout = 8,   // an orchestration-side tensor access waited too long
  OutOfMemory = 9,
  Internal = 10,
};
const char* FatalCodeName(FatalCode code);

struct FatalError {
  FatalCode code = FatalCode::Internal;
  std::string message;
  std::string str() const;  // "fatal error 6 (KernelFailed): message"
};

}  // namespace pypto::rt
