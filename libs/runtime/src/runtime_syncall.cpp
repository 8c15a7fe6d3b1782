// syncall barriers among the blocks of an AIC or AIV launch (LaunchBarrier::SyncAll): arriving and
// releasing, giving left-over work a thread while threads wait, and failing the run, with what each
// block is doing, when a barrier can never complete.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "runtime_impl.h"

namespace pypto::rt {

// ---- syncall barriers ------------------------------------------------------------------------------
// A block waiting at a barrier keeps its core and its thread. Whether the barrier can still complete
// is decided from what every core is doing, never from how long anyone has waited: while a kernel
// runs that is not at a barrier it may yet arrive (or finish and free a core), and while a task can
// be dispatched it may be a block awaited. When neither holds and the launches waited for are fully
// submitted, nothing can ever change, and the run fails at once. The code is SchedulerTimeout, the
// class upstream reports such a hang under (S1, running-stalled, after its watchdog), with the
// cause named instead of a timeout.

pypto::expected<void, FatalError> Runtime::Impl::SyncAll(const KernelLaunch& running, std::string_view kernel) {
  std::unique_lock lock(mu_);
  if (error_) return pypto::unexpected(*error_);
  auto it = live_.find(running.task_id);
  Launch* launch = it == live_.end() || it->second->dummy ? nullptr : it->second->launch.get();
  if (!launch || launch->blocks.empty()) {
    return pypto::unexpected(FatalError{
        FatalCode::KernelFailed,
        fmt::format("task {} (kernel '{}'): a syncall is supported in the blocks of an AIC or AIV launch, not in "
                    "a member of a mixed task",
                    running.task_id, kernel)});
  }
  if (launch->blocks.size() == 1) return {};
  Task& task = *it->second;
  ++progress_;  // an arrival is progress, for the watchdog
  const uint64_t generation = launch->generation;
  if (++launch->arrived == static_cast<int32_t>(launch->blocks.size())) {
    // The last block to arrive releases the others.
    launch->arrived = 0;
    ++launch->generation;
    for (Task* block : launch->blocks) {
      if (block && block->at_barrier) {
        block->at_barrier = false;
        --barrier_waiters_;
      }
    }
    barrier_cv_.notify_all();
    return {};
  }
  task.at_barrier = true;
  ++barrier_waiters_;
  launch->kernel = std::string(kernel);
  CheckBarrierStall();
  barrier_cv_.wait(lock, [&] { return launch->generation != generation || error_.has_value(); });
  if (launch->generation != generation) return {};
  task.at_barrier = false;
  --barrier_waiters_;
  return pypto::unexpected(*error_);
}

// With mu_ held, while threads wait at barriers: a dispatchable task gets a thread even if every
// thread of the pool is waiting (the cores decide what may run, not the host's threads).
void Runtime::Impl::ProvideThread() {
  if (idle_workers_ > 0) return work_cv_->notify_one();
  if (caller_first_ && idle_waiters_ > 0) return idle_cv_.notify_one();
  if (!workers_started_ && worker_count_ > 0) return StartWorkers();
  workers_.emplace_back([this] { WorkerLoop(); });
}

void Runtime::Impl::CheckBarrierStall() {
  if (barrier_waiters_ == 0 || error_) return;
  if (NextDispatchable()) return ProvideThread();
  if (running_ > barrier_waiters_) return;
  const Launch* stuck = nullptr;
  for (const auto& [id, task] : live_) {
    if (!task->at_barrier) continue;
    if (!task->launch->submitted) return;  // more of its blocks are on their way
    if (!stuck || task->launch->first_task < stuck->first_task) stuck = task->launch.get();
  }
  if (stuck) RecordError({FatalCode::SchedulerTimeout, BarrierStallMessage(*stuck)});
}

// What each block of a launch whose barrier cannot complete is doing.
std::string Runtime::Impl::BarrierStallMessage(const Launch& launch) const {
  std::vector<std::string> waiting;
  std::vector<size_t> queued, finished;
  CoreType type = CoreType::AIV;
  for (size_t b = 0; b < launch.blocks.size(); ++b) {
    const Task* task = launch.blocks[b];
    if (!task) {
      finished.push_back(b);
    } else if (task->at_barrier) {
      type = task->core_type;
      waiting.push_back(fmt::format("{} on {} core {}", b, CoreTypeName(task->core_type), task->core));
    } else {
      queued.push_back(b);  // the blocks of a launch wait for nothing but its gate, long passed
    }
  }
  const size_t n = launch.blocks.size();
  std::string text = fmt::format(
      "task {} (kernel '{}', func_id {}): the syncall among its {} blocks can never complete: {} of {} blocks "
      "arrived (block {})",
      launch.first_task, launch.kernel, launch.func_id, n, waiting.size(), n, fmt::join(waiting, ", block "));
  if (!queued.empty())
    text += fmt::format("; block {} cannot start: no {} core is free, all {} are held by blocks waiting at a barrier",
                        fmt::join(queued, ", "), CoreTypeName(type), CoreCount(type));
  if (!finished.empty()) text += fmt::format("; block {} finished without reaching it", fmt::join(finished, ", "));
  if (!queued.empty())
    text += fmt::format("; launch it with pl.spmd(..., sync_start=True) and at most {} blocks, so that every block "
                        "holds a core at the same time",
                        CoreCount(type));
  return text;
}

}  // namespace pypto::rt
