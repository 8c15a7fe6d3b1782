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

 private:
  std::mutex mu_;  // guards running_ and thread_
  rt::TaskId running_ = rt::kInvalidTaskId;
  pthread_t thread_{};
  std::atomic<rt::TaskId> abort_{rt::kInvalidTaskId};
};

// Defined by extern_guard.cpp: from a signal handler on a thread inside a hand-written kernel, leaves
// the kernel as a fault does (RunExternGuarded returns an error); elsewhere it returns.
void AbandonRunningKernel(int signal);

}  // namespace pypto::sim
