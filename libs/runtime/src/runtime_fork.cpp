// Fork safety (runtime_fork.h): the pthread_atfork handlers that hold every CallerFirst runtime's
// scheduling mutex across fork(), and what a runtime forgets in the child (its workers and their
// condition variable), kept apart from the scheduler that starts those workers.
#include "runtime_fork.h"

#include <condition_variable>
#include <memory>
#include <thread>

#include <pthread.h>

#include "runtime_impl.h"

namespace pypto::rt {

ForkGuard& ForkGuard::Get() {
  static ForkGuard* guard = [] {
    auto* created = new ForkGuard();  // never destroyed: fork may come during static destruction
    pthread_atfork([] { Get().Prepare(); }, [] { Get().Release(false); }, [] { Get().Release(true); });
    return created;
  }();
  return *guard;
}

void ForkGuard::Add(ForkAware* runtime) {
  std::lock_guard hold(mu_);
  runtimes_.push_back(runtime);
}

void ForkGuard::Remove(ForkAware* runtime) {
  std::lock_guard hold(mu_);
  std::erase(runtimes_, runtime);
}

void ForkGuard::Prepare() {
  mu_.lock();
  for (ForkAware* runtime : runtimes_) runtime->BeforeFork();
}

void ForkGuard::Release(bool child) {
  for (ForkAware* runtime : runtimes_) child ? runtime->AfterForkInChild() : runtime->AfterForkInParent();
  mu_.unlock();
}

// In the child of a fork, single-threaded, with mu_ held since BeforeFork.
void Runtime::Impl::AfterForkInChild() {
  for (std::thread& worker : workers_) worker.detach();  // they do not exist here
  workers_.clear();
  workers_started_ = false;
  idle_workers_ = 0;
  idle_waiters_ = 0;
  (void)work_cv_.release();  // its waiters do not exist either: never signal or destroy it
  work_cv_ = std::make_unique<std::condition_variable>();
  if (watchdog_.joinable()) watchdog_.detach();  // nor does the watchdog: a new one starts with a kernel
  watchdog_started_ = false;
  watchdog_asleep_ = false;
  (void)watchdog_cv_.release();
  watchdog_cv_ = std::make_unique<std::condition_variable>();
  mu_.unlock();
}

}  // namespace pypto::rt
