#include "kernel_abort.h"

#include <signal.h>

#include <mutex>

namespace pypto::sim {
namespace {

// A real-time signal from the top of the range, where libraries rarely look; it is only ever sent to
// a thread that runs a kernel, after its handler is installed.
int AbortSignal() { return SIGRTMAX - 2; }

// Set while this thread runs a kernel: the core and the task.
thread_local KernelAbort* t_core = nullptr;
thread_local rt::TaskId t_task = rt::kInvalidTaskId;

void OnAbort(int signal) {
  // A signal sent just before the kernel returned may arrive after: then it is not meant for this one.
  if (t_core && t_core->requested(t_task)) AbandonRunningKernel(signal);
}

void InstallHandlerOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action {};
    action.sa_handler = OnAbort;
    action.sa_flags = SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    sigaction(AbortSignal(), &action, nullptr);
  });
}

}  // namespace

KernelAbort::Running::Running(KernelAbort& core, rt::TaskId task) : core_(core) {
  std::lock_guard lock(core.mu_);
  core.abort_.store(rt::kInvalidTaskId, std::memory_order_relaxed);  // task ids restart with every run
  core.running_ = task;
  core.thread_ = pthread_self();
  t_core = &core;
  t_task = task;
}

KernelAbort::Running::~Running() {
  std::lock_guard lock(core_.mu_);
  core_.running_ = rt::kInvalidTaskId;
  t_core = nullptr;
  t_task = rt::kInvalidTaskId;
}

KernelAbort::SeenArgs::SeenArgs(const int64_t* args) : core_(t_core) {
  if (!core_) return;
  std::lock_guard lock(core_->mu_);
  core_->seen_args_ = args;
}

KernelAbort::SeenArgs::~SeenArgs() {
  if (!core_) return;
  std::lock_guard lock(core_->mu_);
  core_->seen_args_ = nullptr;
}

void NotePeerWait() {
  if (t_core) t_core->peer_waits_.fetch_add(1, std::memory_order_relaxed);
}

void KernelAbort::Abort(rt::TaskId task) {
  InstallHandlerOnce();
  std::lock_guard lock(mu_);
  if (running_ != task) return;  // it returned
  abort_.store(task, std::memory_order_relaxed);
  pthread_kill(thread_, AbortSignal());
}

}  // namespace pypto::sim
