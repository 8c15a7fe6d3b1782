// The public Runtime and the life of its scheduler: core type names, the clock, constructing and
// destroying Runtime::Impl (which starts and stops its workers), the end of a run (WaitAll, Reset),
// and the Runtime members that forward to it. How the scheduler works is described in
// runtime_impl.h; its members are defined by concept in the other runtime_*.cpp files.
#include "pypto/runtime/runtime.h"

#include "pypto/runtime/task_observer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

#include "runtime_impl.h"

namespace pypto::rt {

const char* CoreTypeName(CoreType type) { return type == CoreType::AIC ? "AIC" : "AIV"; }
const char* CoreTypeKey(CoreType type) { return type == CoreType::AIC ? "aic" : "aiv"; }

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Runtime::Impl::Impl(RuntimeOptions options, CoreExecutor& executor)
    : options_(options),
      executor_(executor),
      caller_first_(options.dispatch == Dispatch::CallerFirst),
      graph_(options.dep_graph) {
  RestartOuterScope();
  for (CoreType type : {CoreType::AIC, CoreType::AIV}) {
    // Reversed so that the lowest-numbered core is handed out first.
    for (int core = CoreCount(type) - 1; core >= 0; --core) free_cores_[Index(type)].push_back(core);
  }
  // More threads than cores could never all hold a core at once.
  const int cores = std::max(1, std::max(0, options_.aic_cores) + std::max(0, options_.aiv_cores));
  int threads = options_.worker_threads > 0 ? options_.worker_threads
                                            : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::clamp(threads, 1, cores);
  if (caller_first_) {
    worker_count_ = threads - 1;  // the waiting thread is the first
    ForkGuard::Get().Add(this);
    spdlog::debug("runtime: {} AIC + {} AIV cores, the waiting thread and up to {} worker threads",
                  options_.aic_cores, options_.aiv_cores, worker_count_);
    return;
  }
  worker_count_ = threads;
  std::lock_guard lock(mu_);
  StartWorkers();
  spdlog::debug("runtime: {} AIC + {} AIV cores, {} worker threads", options_.aic_cores, options_.aiv_cores,
                threads);
}

Runtime::Impl::~Impl() {
  if (caller_first_) ForkGuard::Get().Remove(this);
  {
    std::unique_lock lock(mu_);
    Drain(lock);
    stopping_ = true;
  }
  work_cv_->notify_all();
  watchdog_cv_->notify_all();
  for (std::thread& worker : workers_) worker.join();
  if (watchdog_.joinable()) watchdog_.join();
}

pypto::expected<void, FatalError> Runtime::Impl::WaitAll() {
  std::unique_lock lock(mu_);
  Drain(lock);
  RestartOuterScope();
  if (error_) return pypto::unexpected(*error_);
  return {};
}

void Runtime::Impl::Reset() {
  std::unique_lock lock(mu_);
  Drain(lock);
  next_id_ = 0;  // first: the new outer scope begins at it
  RestartOuterScope();
  ForgetRetired();
  completed_ = 0;
  error_.reset();
}

size_t Runtime::Impl::tasks_completed() const {
  std::lock_guard lock(mu_);
  return completed_;
}

Runtime::Runtime(RuntimeOptions options, CoreExecutor& executor)
    : impl_(std::make_unique<Impl>(options, executor)) {}
Runtime::~Runtime() = default;

pypto::expected<TaskId, FatalError> Runtime::SubmitAic(int32_t func_id, const TaskArgs& args) {
  return impl_->SubmitGraphed(CoreType::AIC, func_id, args);
}
pypto::expected<TaskId, FatalError> Runtime::SubmitAiv(int32_t func_id, const TaskArgs& args) {
  return impl_->SubmitGraphed(CoreType::AIV, func_id, args);
}
pypto::expected<TaskId, FatalError> Runtime::Submit(CoreType core, int32_t func_id, const TaskArgs& args) {
  return impl_->SubmitGraphed(core, func_id, args);
}
pypto::expected<void, FatalError> Runtime::ScopeBegin(ScopeMode mode) { return impl_->ScopeBegin(mode); }
void Runtime::ScopeEnd() { impl_->ScopeEnd(); }
pypto::expected<TaskId, FatalError> Runtime::SubmitMixed(const MixedKernels& kernels, const TaskArgs& args) {
  return impl_->SubmitMixedGraphed(kernels, args);
}
pypto::expected<TaskId, FatalError> Runtime::SubmitDummy(const TaskArgs& args) {
  return impl_->SubmitDummyGraphed(args);
}
pypto::expected<TaskId, FatalError> Runtime::SubmitFill(const TaskArgs& args, uint64_t bits) {
  return impl_->SubmitDummyGraphed(args, bits);
}
pypto::expected<void, FatalError> Runtime::WaitAll() { return impl_->WaitAll(); }
void Runtime::Reset() { impl_->Reset(); }
size_t Runtime::tasks_completed() const { return impl_->tasks_completed(); }

}  // namespace pypto::rt
