// Fork safety for runtimes whose worker threads outlive a run: the process-wide registry that holds
// every such runtime's scheduling mutex across fork() and lets each reset its thread state in the
// child. Separate from the scheduler because it is process state, not a runtime's own.
#pragma once

#include <mutex>
#include <vector>

namespace pypto::rt {

// fork() and long-lived workers: a child gets a copy of every mutex and condition variable but none
// of the threads. A mutex may be copied locked by a worker, and a condition variable counts workers
// waiting on it that do not exist in the child (destroying or signalling it may then wait forever).
// So every CallerFirst runtime (whose workers outlive a run) takes part in fork: its scheduling mutex
// is held across it, and in the child it forgets its workers and their condition variable; the
// child runs its tasks on the waiting thread and starts workers of its own when it needs them.
class ForkAware {
 public:
  virtual void BeforeFork() = 0;
  virtual void AfterForkInParent() = 0;
  virtual void AfterForkInChild() = 0;

 protected:
  ~ForkAware() = default;
};

class ForkGuard {
 public:
  static ForkGuard& Get();
  // Never called with a runtime's mutex held: the order is the guard's mutex, then the runtimes'.
  void Add(ForkAware* runtime);
  void Remove(ForkAware* runtime);

 private:
  void Prepare();
  void Release(bool child);

  std::mutex mu_;
  std::vector<ForkAware*> runtimes_;
};

}  // namespace pypto::rt
