// Runs a hand-written kernel so that a crash inside it is a fatal error of the run, not the end of the
// process: SIGSEGV, SIGBUS, SIGFPE and SIGILL raised on the calling thread while the kernel runs are
// caught, and the error names the kernel, task, core and signal. A fault at the address held in a
// scalar slot of args[] (plus less than a descriptor's size) is reported as what it almost always is:
// the kernel read that scalar as a tensor descriptor.
#pragma once

#include "pypto/runtime/runtime.h"
#include "pypto/support/expected.h"
#include "core_memory.h"
#include "sim_kernel.h"

namespace pypto::sim {

// Before the entry, a library that defines pypto_sim_bind_core gets the core: its ids, `memory`'s UB and
// the runtime's barrier; an exception thrown out of the kernel is its diagnostic and fails the run.
pypto::expected<void, rt::FatalError> RunExternGuarded(const DecodedKernel& kernel, const rt::KernelLaunch& launch,
                                                       CoreMemory& memory);

}  // namespace pypto::sim
