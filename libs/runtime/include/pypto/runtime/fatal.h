// Fatal error codes of a run, with their classes (as upstream's runtime reports them).
#pragma once

#include <cstdint>
#include <string>

namespace pypto::rt {

// Codes upstream's runtime also latches keep upstream's numbers and names (its sim reports "code -N");
// the ones only this runtime raises are numbered from 200, past upstream's orchestration (1-11) and
// scheduler (100+) codes. KernelFailed had 6 until upstream's table still naming 6 (its retired
// DEPENDENCY_OVERFLOW, "now reported as DEP_POOL_OVERFLOW") made a kernel failure read as a dependency
// overflow there. docs/simulator.md ("Fatal codes") lists every upstream code and where it is met.
enum class FatalCode : int32_t {
  None = 0,
  ScopeDeadlock = 1,        // a scope holds every slot of its task window, so no task can be added
  HeapRingDeadlock = 2,     // a tensor needs more of its heap ring than can ever be given back
  FlowControlDeadlock = 3,  // nested scopes sharing the last ring hold all its slots between them
  DepPoolOverflow = 4,      // a submit's dependencies need more of its ring's pool than can be given back
  InvalidArgs = 5,          // a malformed task (tensor after scalar, too many args, ...)
  RequireSyncStartInvalid = 7,  // a sync_start launch has more blocks than cores of its type
  TensorWaitTimeout = 8,    // an orchestration-side tensor access waited too long (not raised yet)
  SchedulerTimeout = 100,   // tasks can never complete
  OutOfMemory = 200,
  Internal = 201,
  Interrupted = 202,  // SIGINT (Ctrl-C) arrived while kernels ran (run_interrupt.h)
  KernelFailed = 203,  // a kernel reported an error, trapped, or raced with another block or lane
};
const char* FatalCodeName(FatalCode code);

struct FatalError {
  FatalCode code = FatalCode::Internal;
  std::string message;
  std::string str() const;  // "fatal error 203 (KernelFailed): message"
};

}  // namespace pypto::rt
