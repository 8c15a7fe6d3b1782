#include "extern_guard.h"

#include <fmt/format.h>
#include <setjmp.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "../extern_include/pypto_sim_core.h"
#include "extern_guard_pages.h"
#include "fault_location.h"
#include "pypto/runtime/chip_tensor.h"
#include "kernel_abort.h"

namespace pypto::sim {
namespace {

// SIGABRT: glibc's abort() unlocks before it raises the signal, so leaving its handler by siglongjmp
// is safe; a failed assert() has printed its message by then.
constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

// What the handler leaves for the thread it interrupted.
struct Fault {
  int signal = 0;
  uintptr_t address = 0;
  uintptr_t instruction = 0;  // the faulting instruction, for the source line
  const char* exit_call = nullptr;  // instead of a signal: the kernel called exit(status) or a relative
  int status = 0;
};

// Set only while this thread runs a hand-written kernel.
thread_local sigjmp_buf* t_jump = nullptr;
thread_local Fault t_fault;

struct sigaction g_previous[std::size(kSignals)];

void ChainToPrevious(int signal, siginfo_t* info, void* context) {
  for (size_t i = 0; i < std::size(kSignals); ++i) {
    if (kSignals[i] != signal) continue;
    const struct sigaction& previous = g_previous[i];
    if (previous.sa_flags & SA_SIGINFO) {
      if (previous.sa_sigaction) return previous.sa_sigaction(signal, info, context);
    } else if (previous.sa_handler != SIG_IGN && previous.sa_handler != SIG_DFL) {
      return previous.sa_handler(signal);
    }
    // The default action: restore it and let the fault happen again when the handler returns.
    ::signal(signal, SIG_DFL);
    return;
  }
}

void OnFault(int signal, siginfo_t* info, void* context) {
  if (!t_jump) return ChainToPrevious(signal, info, context);  // not inside a kernel: not ours
  t_fault = Fault{.signal = signal,
                  .address = reinterpret_cast<uintptr_t>(info->si_addr),
                  .instruction = InstructionAddressOf(context)};
  sigjmp_buf* jump = t_jump;
  t_jump = nullptr;
  siglongjmp(*jump, 1);
}

// Each kernel thread runs its kernels on its own stack, so a stack overflow in one can still be
// reported: the handler runs on this alternate stack. A thread that has one already (AddressSanitizer
// gives every thread its own, and unmaps it when the thread ends) keeps it: replacing it made the
// sanitizer's thread exit unmap our buffer and abort.
void EnsureAltStack() {
  thread_local bool ready = false;
  thread_local std::unique_ptr<char[]> stack;
  if (ready) return;
  ready = true;
  stack_t current{};
  if (sigaltstack(nullptr, &current) == 0 && !(current.ss_flags & SS_DISABLE) && current.ss_size >= SIGSTKSZ) return;
  const size_t size = std::max<size_t>(SIGSTKSZ, 64 * 1024);
  stack = std::make_unique<char[]>(size);
  stack_t alt{};
  alt.ss_sp = stack.get();
  alt.ss_size = size;
  sigaltstack(&alt, nullptr);
}

void InstallHandlersOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action {};
    action.sa_sigaction = OnFault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &action, &g_previous[i]);
  });
}

const char* SignalName(int signal) {
  switch (signal) {
    case SIGSEGV: return "SIGSEGV (invalid memory access)";
    case SIGBUS: return "SIGBUS (misaligned or unmapped memory access)";
    case SIGFPE: return "SIGFPE (arithmetic error, e.g. an integer division by zero)";
    case SIGILL: return "SIGILL (illegal instruction)";
    case SIGABRT: return "SIGABRT (abort(), which a failed assert() calls)";
  }
  return "a signal";
}

// The scalar parameter whose value, used as a descriptor address, explains the fault.
std::optional<std::string> ScalarReadAsDescriptor(const DecodedKernel& kernel, const int64_t* args, uintptr_t address) {
  for (const KernelParam& param : kernel.params) {
    if (param.is_tensor) continue;
    const auto value = static_cast<uintptr_t>(args[param.slot]);
    if (address < value || address - value >= sizeof(rt::ChipTensor)) continue;
    return fmt::format(
        "it read args[{}], the scalar '{}' ({}, value {}), as a tensor descriptor pointer. In args[] the {} "
        "tensor(s) come first, in signature order (args[0..{}]), and the scalars after them, whatever their "
        "position in the signature",
        param.slot, param.name, ir::DataTypeName(param.dtype), args[param.slot], kernel.tensor_count,
        kernel.tensor_count == 0 ? 0 : kernel.tensor_count - 1);
  }
  return std::nullopt;
}

// What a kernel library's callbacks reach (pypto_sim_core.h): the launch, and why the run failed
// when the runtime refused a wait.
struct HostSide {
  const DecodedKernel* kernel;
  const rt::KernelLaunch* launch;
  std::optional<rt::FatalError> failure;
};

// SyncAll from the kernel: the runtime keeps the barrier, since only its scheduler knows whether the
// blocks still missing can ever arrive (as for a native kernel's pl.system.syncall).
int32_t SyncAllAt(void* opaque, const char* call) {
  auto& host = *static_cast<HostSide*>(opaque);
  if (!host.launch->barrier) {
    const auto* local = reinterpret_cast<const rt::LocalContext*>(host.launch->args[rt::kLocalContextSlot]);
    if (!local || local->block_num == 1) return 0;
    host.failure = rt::FatalError{
        rt::FatalCode::KernelFailed,
        fmt::format("hand-written kernel '{}': SyncAll among {} blocks needs the runtime's barrier, and this launch "
                    "has none",
                    host.kernel->name, local->block_num)};
    return 1;
  }
  auto synced = host.launch->barrier->SyncAll(*host.launch, host.kernel->name, call ? call : "");
  if (synced) return 0;
  host.failure = synced.error();
  return 1;
}
int32_t SyncAllBlocks(void* opaque) { return SyncAllAt(opaque, nullptr); }

// A kernel library's warning (AscendC's GlobalTensor scalar read of host data): into the simulator's
// log (the console, or $ASCEND_PROCESS_LOG_PATH as the runtime's lines), once per kernel and line for
// the process, since a kernel in a loop would otherwise repeat it every task.
void WarnOnce(void* opaque, const char* message) {
  const auto& host = *static_cast<const HostSide*>(opaque);
  static std::mutex mu;
  static std::set<std::string> reported;
  {
    std::lock_guard lock(mu);
    if (!reported.insert(host.kernel->name + '\n' + message).second) return;
  }
  const rt::KernelLaunch& launch = *host.launch;
  spdlog::warn("hand-written kernel '{}' (task {}, {} core {}): {}", host.kernel->name, launch.task_id,
               rt::CoreTypeName(launch.core_type), launch.core_index, message);
}

// A cross-core flag from the kernel: the runtime's event of the mixed block (LaunchBarrier::EventSet
// / EventWait), which knows whether a wait can still be answered. A refusal names the kernel's call.
int32_t CrossCoreEvent(HostSide& host, bool set, int32_t id, int32_t mode, const char* call) {
  const rt::KernelLaunch& launch = *host.launch;
  if (!launch.barrier || launch.mixed_group == rt::kInvalidTaskId) {
    host.failure = rt::FatalError{
        rt::FatalCode::KernelFailed,
        fmt::format("hand-written kernel '{}' (task {}, {} core {}): {}: cross-core flags are between the cube and "
                    "vector cores of one block of a mixed kernel, and this kernel runs alone; declare it with "
                    "@pl.jit.extern(core_type=\"mixed\", aic_source=..., aiv_source=...)",
                    host.kernel->name, launch.task_id, rt::CoreTypeName(launch.core_type), launch.core_index, call)};
    return 1;
  }
  const rt::EventRef event{.id = id, .mode = mode};
  auto done = set ? launch.barrier->EventSet(launch, host.kernel->name, event)
                  : launch.barrier->EventWait(launch, host.kernel->name, event);
  if (done) return 0;
  rt::FatalError error = done.error();
  error.message += fmt::format(" (hand-written kernel '{}' on {} core {} was at {})", host.kernel->name,
                               rt::CoreTypeName(launch.core_type), launch.core_index, call);
  host.failure = std::move(error);
  return 1;
}
int32_t CrossCoreSet(void* opaque, int32_t id, int32_t mode, const char* call) {
  return CrossCoreEvent(*static_cast<HostSide*>(opaque), true, id, mode, call);
}
int32_t CrossCoreWait(void* opaque, int32_t id, const char* call) {
  return CrossCoreEvent(*static_cast<HostSide*>(opaque), false, id, 2, call);
}

PyptoSimCore DescribeCore(HostSide& host, CoreMemory& memory, int64_t* args) {
  const rt::KernelLaunch& launch = *host.launch;
  PyptoSimCore core{.abi = PYPTO_SIM_CORE_ABI,
                    .core_type = static_cast<int32_t>(launch.core_type),
                    .core_index = launch.core_index,
                    .in_mixed_task = launch.mixed_group != rt::kInvalidTaskId ? 1 : 0,
                    .args = args,
                    .ub = nullptr,
                    .ub_bytes = 0,
                    .host = &host,
                    .sync_all = SyncAllBlocks,
                    .warn = WarnOnce,
                    .cross_core_set = CrossCoreSet,
                    .cross_core_wait = CrossCoreWait,
                    .sync_all_at = SyncAllAt};
  // The whole of a buffer, allocated on first use and scrubbed between runs like a generated kernel's.
  auto whole = [&memory](ir::MemorySpace space, unsigned char*& base, int64_t& bytes) {
    base = reinterpret_cast<unsigned char*>(memory.Whole(space, bytes));
  };
  if (launch.core_type == rt::CoreType::AIV) {
    whole(ir::MemorySpace::Vec, core.ub, core.ub_bytes);
  } else {
    whole(ir::MemorySpace::Mat, core.l1, core.l1_bytes);
    whole(ir::MemorySpace::Left, core.l0a, core.l0a_bytes);
    whole(ir::MemorySpace::Right, core.l0b, core.l0b_bytes);
    whole(ir::MemorySpace::Acc, core.l0c, core.l0c_bytes);
    whole(ir::MemorySpace::Bias, core.bias, core.bias_bytes);
  }
  return core;
}

}  // namespace

pypto::expected<void, rt::FatalError> RunExternGuarded(const DecodedKernel& kernel, const rt::KernelLaunch& launch,
                                                       CoreMemory& memory) {
  InstallHandlersOnce();
  EnsureAltStack();
  HostSide host{.kernel = &kernel, .launch = &launch, .failure = std::nullopt};
  GuardedTensors tensors(kernel, launch.args);  // copied back when this returns, by any path
  const KernelAbort::SeenArgs seen(tensors.args());  // the stall watchdog's progress mark reads the copies
  const PyptoSimCore core = DescribeCore(host, memory, tensors.args());
  const std::string where = fmt::format("hand-written kernel '{}' (task {}, {} core {})", kernel.name, launch.task_id,
                                        rt::CoreTypeName(launch.core_type), launch.core_index);
  sigjmp_buf jump;
  if (sigsetjmp(jump, 1) == 0) {
    t_jump = &jump;
    try {
      if (kernel.external_bind) kernel.external_bind(&core);
      kernel.external_entry(tensors.args());
    } catch (const std::exception& e) {
      // A kernel library's diagnostic (AscendC's InitBuffer beyond UB, ...) or a wait the runtime refused.
      t_jump = nullptr;
      if (host.failure) return pypto::unexpected(*host.failure);
      return pypto::unexpected(rt::FatalError{rt::FatalCode::KernelFailed, fmt::format("{}: {}", where, e.what())});
    }
    t_jump = nullptr;
    if (auto stray = tensors.StrayWrite())
      return pypto::unexpected(rt::FatalError{rt::FatalCode::KernelFailed, fmt::format("{} {}", where, *stray)});
    return {};
  }
  // Back from the handler: the kernel was abandoned where it faulted.
  const Fault fault = t_fault;
  if (fault.exit_call) {
    return pypto::unexpected(rt::FatalError{
        rt::FatalCode::KernelFailed,
        fmt::format("{} called {}({}), which would have ended the whole process; a kernel ends by returning from "
                    "kernel_entry, and reports a failure through its outputs",
                    where, fault.exit_call, fault.status)});
  }
  if (fault.signal == SIGABRT) {
    return pypto::unexpected(
        rt::FatalError{rt::FatalCode::KernelFailed, fmt::format("{} crashed with {}", where, SignalName(SIGABRT))});
  }
  if (fault.signal == SIGSEGV) {
    if (auto write = tensors.DescribeWrite(fault.address))
      return pypto::unexpected(rt::FatalError{rt::FatalCode::KernelFailed, fmt::format("{} {}", where, *write)});
  }
  std::string message = fmt::format("{} crashed with {} at address {:#x}", where, SignalName(fault.signal),
                                    fault.address);
  if (auto line = SourceLocationOf(fault.instruction)) message += fmt::format(" ({})", *line);
  if (auto cause = ScalarReadAsDescriptor(kernel, launch.args, fault.address); cause && fault.signal != SIGFPE)
    message += ": " + *cause;
  return pypto::unexpected(rt::FatalError{rt::FatalCode::KernelFailed, std::move(message)});
}

void KernelExitHook(const char* call, int status) {
  if (!t_jump) return;  // not inside a hand-written kernel: the C library's call goes ahead
  t_fault = Fault{.exit_call = call, .status = status};
  sigjmp_buf* jump = t_jump;
  t_jump = nullptr;
  siglongjmp(*jump, 1);
}

void AbandonRunningKernel(int signal) {
  if (!t_jump) return;  // not inside a hand-written kernel
  t_fault = Fault{.signal = signal, .address = 0};
  sigjmp_buf* jump = t_jump;
  t_jump = nullptr;
  siglongjmp(*jump, 1);
}

}  // namespace pypto::sim
