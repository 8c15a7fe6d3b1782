// Giving up a kernel that the runtime's watchdog found stalled (rt::CoreExecutor::Abort): blocks of a
// launch spinning on a flag that blocks which cannot start would set. The run has failed already
// (SchedulerTimeout); the kernels must return so that it ends instead of hanging.
//
// One KernelAbort per core records which task runs there and on which thread. Abort sets the flag a
// generated kernel polls at its backward branches, and interrupts the thread with kAbortSignal, whose
// handler abandons a hand-written kernel where it is, as a crash does (extern_guard.cpp). A kernel
// that already returned is not touched: the handler checks that the task it interrupts is the one
// aborted.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <mutex>

#include "pypto/runtime/runtime.h"

namespace pypto::sim {

class KernelAbort {
 public:
  // While it lives, the kernel of `task` runs on this core, on the calling thread.
  class Running {
   public:
    Running(KernelAbort& core, rt::TaskId task);
    ~Running();
    Running(const Running&) = delete;
    Running& operator=(const Running&) = delete;

   private:
    KernelAbort& core_;
  };

  // Asks the kernel of `task` to give up, if it still runs on this core.
  void Abort(rt::TaskId task);
  // Polled by generated kernels.
  bool requested(rt::TaskId task) const { return abort_.load(std::memory_order_relaxed) == task; }
  // How often kernels on this core polled a peer rank (NotePeerWait), for the progress mark.
  uint64_t peer_waits() const { return peer_waits_.load(std::memory_order_relaxed); }

  // While it lives, the kernel running on the calling thread's core reads and writes its tensors
  // through `args` rather than its launch's args[] (a hand-written kernel given copies of its tensors):
  // its progress mark must read those. What `args` points to must outlive it.
  class SeenArgs {
   public:
    explicit SeenArgs(const int64_t* args);
    ~SeenArgs();
    SeenArgs(const SeenArgs&) = delete;
    SeenArgs& operator=(const SeenArgs&) = delete;

   private:
    KernelAbort* core_;
  };
  // From any thread: `mark(args)` with the args[] the kernel of `task` works on, if it still runs
  // here (else 0 is returned); while it runs, those args stay valid.
  template <typename Mark>
  uint64_t WithSeenArgs(rt::TaskId task, const int64_t* launch_args, Mark mark) {
    std::lock_guard lock(mu_);
    if (running_ != task) return 0;
    return mark(seen_args_ ? seen_args_ : launch_args);
  }

 private:
  std::mutex mu_;  // guards running_, thread_ and seen_args_
  const int64_t* seen_args_ = nullptr;
  rt::TaskId running_ = rt::kInvalidTaskId;
  pthread_t thread_{};
  std::atomic<rt::TaskId> abort_{rt::kInvalidTaskId};
  std::atomic<uint64_t> peer_waits_{0};
  friend void NotePeerWait();
};

// Called by a kernel polling a peer rank (a comm wait or barrier, comm_exec.cpp): waiting on another
// process, which has its own time limit, is progress for the stall watchdog (progress_mark.h).
void NotePeerWait();

// Defined by extern_guard.cpp: from a signal handler on a thread inside a hand-written kernel, leaves
// the kernel as a fault does (RunExternGuarded returns an error); elsewhere it returns.
void AbandonRunningKernel(int signal);

}  // namespace pypto::sim
