// syncall barriers among the blocks of an AIC or AIV launch, or among every member (cube and vector)
// of every block of a mixed launch (LaunchBarrier::SyncAll; AscendC's SyncAll<false>): arriving and
// releasing, giving left-over work a thread while threads wait, and failing the run, with what each
// block or member is doing, when a barrier can never complete.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <ranges>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "mixed_block.h"
#include "runtime_impl.h"

namespace pypto::rt {

// ---- syncall barriers ------------------------------------------------------------------------------
// A block (or member) waiting at a barrier keeps its core and its thread. Whether the barrier can
// still complete is decided from what every core is doing, never from how long anyone has waited:
// while a kernel runs that is not at a barrier, a cross-core pipe or event it may yet arrive (or
// finish and free a core), and while a task can be dispatched it may be one awaited. When neither
// holds and the launches waited for are fully submitted, nothing can ever change, and the run fails
// at once. The code is SchedulerTimeout, the class upstream reports such a hang under (S1,
// running-stalled, after its watchdog), with the cause named instead of a timeout.

namespace {

// "file:line: SyncAll(): " where the kernel waits, when it said; else nothing.
std::string CallPrefix(const Launch& launch) { return launch.call.empty() ? std::string() : launch.call + ": "; }

// "block 3", "blocks 0 to 23", "blocks 0, 2 to 5": block indices in ascending order, runs collapsed.
std::string Blocks(const std::vector<size_t>& blocks) {
  std::vector<std::string> runs;
  for (size_t i = 0; i < blocks.size();) {
    size_t j = i;
    while (j + 1 < blocks.size() && blocks[j + 1] == blocks[j] + 1) ++j;
    runs.push_back(j == i ? fmt::format("{}", blocks[i]) : fmt::format("{} to {}", blocks[i], blocks[j]));
    i = j + 1;
  }
  return fmt::format("{} {}", blocks.size() == 1 ? "block" : "blocks", fmt::join(runs, ", "));
}

}  // namespace

pypto::expected<void, FatalError> Runtime::Impl::SyncAll(const KernelLaunch& running, std::string_view kernel,
                                                         std::string_view call) {
  std::unique_lock lock(mu_);
  if (error_) return pypto::unexpected(*error_);
  auto it = live_.find(running.task_id);
  Task* task = it == live_.end() || it->second->dummy ? nullptr : it->second.get();
  Launch* launch = !task ? nullptr : task->mixed_launch ? task->mixed_launch.get() : task->launch.get();
  if (!launch || launch->parties().empty()) {
    return pypto::unexpected(FatalError{
        FatalCode::KernelFailed,
        fmt::format("task {} (kernel '{}'): a syncall from a task that is no block of a launch the runtime runs",
                    running.task_id, kernel)});
  }
  std::vector<Task*>& parties = launch->parties();
  if (parties.size() == 1) return {};
  ++progress_;  // an arrival is progress, for the watchdog
  if (task->mixed_block) {
    MixedMember& member = task->mixed_block->member(task->member);
    if (member.kernel.empty()) member.kernel = std::string(kernel);
  }
  const uint64_t generation = launch->generation;
  if (++launch->arrived == static_cast<int32_t>(parties.size())) {
    // The last to arrive releases the others.
    launch->arrived = 0;
    ++launch->generation;
    for (Task* party : parties) {
      if (party && party->at_barrier) {
        party->at_barrier = false;
        --barrier_waiters_;
      }
    }
    barrier_cv_.notify_all();
    return {};
  }
  task->at_barrier = true;
  ++barrier_waiters_;
  launch->kernel = std::string(kernel);
  if (!call.empty()) launch->call = std::string(call);
  CheckBarrierStall();
  barrier_cv_.wait(lock, [&] { return launch->generation != generation || error_.has_value(); });
  if (launch->generation != generation) return {};
  task->at_barrier = false;
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
  if (running_ > barrier_waiters_ + PeerWaiters()) return;
  const Launch* stuck = nullptr;
  for (const auto& [id, task] : live_) {
    if (!task->at_barrier) continue;
    const Launch* launch = task->mixed_launch ? task->mixed_launch.get() : task->launch.get();
    if (!launch->submitted) return;  // more of its blocks are on their way
    if (!stuck || launch->first_task < stuck->first_task) stuck = launch;
  }
  if (!stuck) return;
  RecordError({FatalCode::SchedulerTimeout,
               stuck->members.empty() ? BarrierStallMessage(*stuck) : MixedBarrierStallMessage(*stuck)});
}

// With mu_ held: the running members of mixed blocks waiting at a cross-core pipe or event, which
// only a peer can end (and a peer waiting at a barrier never will while they wait).
int Runtime::Impl::PeerWaiters() const {
  int waiting = 0;
  for (const auto& [id, task] : live_) {
    if (!task->running || !task->mixed_block || task->at_barrier) continue;
    const MixedMember& member = task->mixed_block->member(task->member);
    waiting += member.waiting.has_value() || member.waiting_event.has_value();
  }
  return waiting;
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
      "task {} (kernel '{}', func_id {}): {}the syncall among its {} blocks can never complete: {} of {} blocks "
      "arrived (block {})",
      launch.first_task, launch.kernel, launch.func_id, CallPrefix(launch), n, waiting.size(), n,
      fmt::join(waiting, ", block "));
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

// What the members of a mixed launch whose SyncAll<false> cannot complete are doing: the blocks all of
// whose members arrived, then each other member by block and place ("AIC", "AIV lane l") and core.
std::string Runtime::Impl::MixedBarrierStallMessage(const Launch& launch) const {
  const size_t per_block = launch.members_per_block;
  const size_t n = launch.members.size();
  const auto place = [&](size_t index) {
    const Task* task = launch.members[index];
    const bool aic = task ? task->core_type == CoreType::AIC : launch.block_cores[0] > 0 && index % per_block == 0;
    const size_t lane = task ? static_cast<size_t>(task->lane) : index % per_block - (launch.block_cores[0] > 0);
    return fmt::format("block {} {}", index / per_block, aic ? std::string("AIC") : fmt::format("AIV lane {}", lane));
  };
  std::vector<size_t> whole, queued;  // blocks
  std::vector<std::string> arrived, busy, finished, kernels;
  size_t arrivals = 0;
  for (size_t b = 0; b < n / per_block; ++b) {
    const auto first = launch.members.begin() + static_cast<std::ptrdiff_t>(b * per_block);
    const auto in_block = std::ranges::subrange(first, first + static_cast<std::ptrdiff_t>(per_block));
    const bool all_arrived = std::ranges::all_of(in_block, [](const Task* t) { return t && t->at_barrier; });
    if (all_arrived) whole.push_back(b);
    if (std::ranges::all_of(in_block, [](const Task* t) { return t && !t->running; })) queued.push_back(b);
    for (size_t i = b * per_block; i < (b + 1) * per_block; ++i) {
      const Task* task = launch.members[i];
      if (!task) {
        finished.push_back(place(i));
        continue;
      }
      const std::string& kernel = task->mixed_block->member(task->member).kernel;
      if (!kernel.empty() && std::ranges::find(kernels, kernel) == kernels.end()) kernels.push_back(kernel);
      arrivals += task->at_barrier;
      const std::string on = fmt::format("{} on {} core {}", place(i), CoreTypeName(task->core_type), task->core);
      if (task->at_barrier && !all_arrived) arrived.push_back(on);
      if (task->running && !task->at_barrier) busy.push_back(on);
    }
  }
  if (!whole.empty()) arrived.insert(arrived.begin(), "every member of " + Blocks(whole));
  std::string text = fmt::format(
      "task {} ({} '{}', func_id {}): {}the syncall of every cube and vector core of its {} blocks (SyncAll<false>, "
      "{} members) can never complete: {} of {} members arrived ({})",
      launch.first_task, kernels.size() == 1 ? "kernel" : "kernels", fmt::join(kernels, "' and '"), launch.func_id,
      CallPrefix(launch), n / per_block, n, arrivals, n, fmt::join(arrived, ", "));
  if (!busy.empty())
    text += fmt::format("; {} wait{} at a cross-core pipe or event for a member at the barrier", fmt::join(busy, ", "),
                        busy.size() == 1 ? "s" : "");
  if (!finished.empty()) text += fmt::format("; {} finished without reaching it", fmt::join(finished, ", "));
  if (queued.empty()) return text;
  int fit = launch.block_cores[1] > 0 ? CoreCount(CoreType::AIV) / launch.block_cores[1] : CoreCount(CoreType::AIC);
  if (launch.block_cores[0] > 0) fit = std::min(fit, CoreCount(CoreType::AIC));
  return text + fmt::format("; {} cannot start: the cores a block takes ({} AIC, {} AIV) are held by kernels waiting "
                            "at a barrier; launch it with pl.spmd(..., sync_start=True) and at most {} blocks, so that "
                            "every member of every block holds a core at the same time",
                            Blocks(queued), launch.block_cores[0], launch.block_cores[1], fit);
}

}  // namespace pypto::rt
