// The idle stall: the orchestration has submitted everything and waits (Drain), no kernel runs, and
// live tasks remain that nothing can ever start: none is dispatchable, and only a running kernel could
// retire a task, free a core or release a dependent. The stall watchdog never sees this (it wakes only
// while kernels run), so without this check the run would wait forever. Upstream's scheduler fails such
// a run with SCHEDULER_TIMEOUT (code 100), sub-class S3 (ready-but-all-idle: tasks are ready, cores
// idle, nothing dispatched, e.g. a sync_start gate) or S4 (dependency-deadlock: no task is ready).
// Here it fails at once, naming the first stuck tasks and why each is not dispatched, and the stuck
// tasks are abandoned (retired unrun, in submit order) so that the runtime is usable again.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "runtime_impl.h"

namespace pypto::rt {

namespace {

// The stuck tasks named one by one; the rest are counted.
constexpr size_t kNamedStuckTasks = 6;

}  // namespace

// With mu_ held: nothing runs and nothing can be dispatched while tasks are live.
bool Runtime::Impl::IdleStalled() const { return running_ == 0 && !live_.empty() && !NextDispatchable(); }

std::string Runtime::Impl::StuckTaskText(const Task& task) const {
  const std::string kernel = executor_.KernelName(task.func_id);
  std::string text = fmt::format("task {} (func_id {}{}, {}", task.id, task.func_id,
                                 kernel.empty() ? "" : fmt::format(", kernel '{}'", kernel), CoreTypeName(task.core_type));
  if ((task.launch && task.launch->blocks.size() > 1) || task.mixed_block) text += fmt::format(", block {}", task.local.block_idx);
  text += fmt::format(", pending {})", task.pending);
  if (task.cohort && task.cohort->size > 1) {
    const Cohort& cohort = *task.cohort;
    const int aic = cohort.cores[Index(CoreType::AIC)];
    const int aiv = cohort.cores[Index(CoreType::AIV)];
    if (cohort.ready < cohort.size)
      return text + fmt::format(": starts with the {} tasks of its co-started group (a sync_start launch or a "
                                "mixed block), of which {} are ready",
                                cohort.size, cohort.ready);
    return text + fmt::format(": its co-started group of {} tasks (a sync_start launch or a mixed block) is ready "
                              "and needs {} AIC and {} AIV cores at once, but {} AIC and {} AIV are free",
                              cohort.size, aic, aiv, free_cores_[Index(CoreType::AIC)].size(),
                              free_cores_[Index(CoreType::AIV)].size());
  }
  if (task.staged)
    return text + fmt::format(": staged on {} core {}, waits for {} producer{}", CoreTypeName(task.core_type),
                              task.core, task.pending, task.pending == 1 ? "" : "s");
  if (task.pending > 0)
    return text + fmt::format(": waits for {} producer{}", task.pending, task.pending == 1 ? "" : "s");
  return text + fmt::format(": ready, but no {} core is free", CoreTypeName(task.core_type));
}

std::string Runtime::Impl::IdleStallMessage() const {
  std::vector<const Task*> live;
  live.reserve(live_.size());
  for (const auto& [id, task] : live_) live.push_back(task.get());
  std::ranges::sort(live, {}, &Task::id);
  const bool any_ready = std::ranges::any_of(live, [](const Task* t) { return !t->dummy && t->pending == 0; });
  // Kernel tasks, a co-started group once (its first task speaks for it); dummies only wait for them.
  std::vector<std::string> named;
  std::vector<const Cohort*> seen;
  size_t unnamed = 0;
  for (const Task* task : live) {
    if (task->dummy) continue;
    if (task->cohort && task->cohort->size > 1) {
      if (std::ranges::find(seen, task->cohort.get()) != seen.end()) continue;
      seen.push_back(task->cohort.get());
    }
    if (named.size() < kNamedStuckTasks)
      named.push_back(StuckTaskText(*task));
    else
      ++unnamed;
  }
  std::vector<std::string> held;  // cores that are not free although nothing runs
  for (const Task* task : live)
    if (task->staged)
      held.push_back(fmt::format("{} core {} by task {}", CoreTypeName(task->core_type), task->core, task->id));
  std::string text = fmt::format(
      "sub-class {}: the orchestration has submitted every task and waits, but no kernel runs and none of the {} "
      "live tasks can start, so the run can never finish: {}{}",
      any_ready ? "S3 (ready-but-all-idle)" : "S4 (dependency-deadlock)", live.size(), fmt::join(named, "; "),
      unnamed ? fmt::format("; and {} more", unnamed) : "");
  if (!held.empty())
    text += fmt::format(". Cores held by tasks staged before their producers finished (early resolve): {}{}",
                        fmt::join(held.begin(), held.begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(
                                                                           held.size(), kNamedStuckTasks)),
                                  ", "),
                        held.size() > kNamedStuckTasks ? fmt::format(" and {} more", held.size() - kNamedStuckTasks)
                                                       : "");
  text += ". This is a scheduling bug of the runtime, not of the program: report it with this message; the stuck "
          "tasks were not run, so the outputs are incomplete";
  return text;
}

// With mu_ held, IdleStalled(): the run fails and every live task is retired unrun. Submit order is an
// order of the dependency graph (a consumer is always newer than its producers), so each task retires
// after all it waits for, as if dispatched after the failure. What retiring queues or stages is dropped,
// and the cores are all free again at the end, as nothing runs.
void Runtime::Impl::FailIdleStall() {
  RecordError({FatalCode::SchedulerTimeout, IdleStallMessage()});
  spdlog::debug("runtime: idle stall, {} live tasks abandoned", live_.size());
  std::vector<TaskId> ids;
  ids.reserve(live_.size());
  for (const auto& [id, task] : live_) ids.push_back(id);
  std::ranges::sort(ids);
  for (TaskId id : ids) {
    for (auto& queue : ready_) queue.clear();
    auto it = live_.find(id);
    if (it == live_.end()) continue;  // a dummy retired with the last task it waited for
    Task& task = *it->second;
    Retire(task, task.staged ? task.core : 0);  // core 0 for one it never held: the free lists are reset below
  }
  for (auto& queue : ready_) queue.clear();
  for (auto& waiting : stageable_) waiting.clear();
  for (CoreType type : {CoreType::AIC, CoreType::AIV}) {
    free_cores_[Index(type)].clear();
    for (int core = CoreCount(type) - 1; core >= 0; --core) free_cores_[Index(type)].push_back(core);
  }
  idle_cv_.notify_all();
}

}  // namespace pypto::rt
