// Runs a hand-written kernel so that a crash inside it is a fatal error of the run, not the end of the
// process: SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT (abort(), a failed assert) raised on the calling
// thread while the kernel runs are caught, and the error names the kernel, task, core and signal; so
// are its calls of exit, quick_exit, _Exit and _exit (KernelExitHook). A fault at the address held in a
// scalar slot of args[] (plus less than a descriptor's size) is reported as what it almost always is:
// the kernel read that scalar as a tensor descriptor. Its tensors sit between guard pages
// (extern_guard_pages.h): a write past one's end is reported with the tensor and the offset.
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

// The kernel library's exit hook (extern_include/pypto_sim_exit_guard.cpp, linked into every
// hand-written kernel with --wrap for exit, quick_exit, _Exit and _exit): its address goes into the
// library's `pypto_sim_exit_hook` variable. On a thread inside a kernel it abandons the kernel as a
// fault does, so that the run fails with KernelFailed naming the call and status; elsewhere it returns
// and the call goes on to the C library.
inline constexpr const char* kExitHookSymbol = "pypto_sim_exit_hook";
using ExitHook = void (*)(const char* call, int status);
void KernelExitHook(const char* call, int status);

}  // namespace pypto::sim
