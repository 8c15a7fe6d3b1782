// Early resolve (TaskArgs::set_allow_early_resolve): staging a task on an idle core before its
// producers finish, once they have all started, so that it starts as soon as the last one retires.
#include "pypto/runtime/task_observer.h"

#include <spdlog/spdlog.h>

#include "runtime_impl.h"

namespace pypto::rt {

// ---- Early resolve ------------------------------------------------------------------------------------
// Upstream pre-stages such a consumer on an idle core as a "gated" dispatch and rings its doorbell when
// the last producer completes. Here staging reserves the core (it leaves free_cores_), and the retire
// of the last producer queues the task at the front of its ready queue, where the next dispatch takes
// it onto that core. A producer counts as released only once every block of its launch has started,
// as upstream requires, so a staged task never holds a core that a block it waits for still needs.

// Staging never takes the last cores of a type. A staged task waits only for producers whose blocks
// have all started, but a task those wait for through other edges may not have started yet, and
// the members of a mixed block start together: pypto-lib's MoE expert loop otherwise ends with every
// AIV core held by a staged `exp_w2_act` block while the mixed `exp_w2_mm` block they wait for
// needs one AIV core to start. Two cores are enough for any mixed block (one AIC, at most two AIV).
// A runtime with a handful of cores (the tests' two) keeps them all stageable.
constexpr size_t kUnstagedCores = 2;

size_t Runtime::Impl::UnstagedCores(CoreType type) const {
  return static_cast<size_t>(CoreCount(type)) > 2 * kUnstagedCores ? kUnstagedCores : 0;
}

// With mu_ held, as a task allowing early resolve is dispatched.
void Runtime::Impl::Started(Task& task) {
  Launch& launch = *task.launch;
  if (++launch.started < static_cast<int32_t>(launch.blocks.size())) return;
  for (Task* block : launch.blocks)  // the blocks still live; retired ones released theirs already
    if (block) ReleaseEarly(*block);
}

void Runtime::Impl::ReleaseEarly(Task& producer) {
  producer.released_early = true;
  for (Task* dependent : producer.dependents)
    if (--dependent->holding_back == 0 && dependent->pending > 0) Stage(*dependent);
}

// A task waiting only for producers released early: onto an idle core now if no task queued
// normally wants one, else when a core frees. A dependency-only task (the join of a launch's blocks,
// pl.system.task_dummy) takes no core: it passes the release on to its own dependents. Co-started
// tasks need all their cores at once and are never staged.
void Runtime::Impl::Stage(Task& task) {
  if (task.dummy) return ReleaseEarly(task);
  if (task.cohort || task.staged) return;
  const size_t type = Index(task.core_type);
  if (!ready_[type].empty() || free_cores_[type].size() <= UnstagedCores(task.core_type)) {
    stageable_[type].push_back(task.id);
    return;
  }
  task.core = free_cores_[type].back();
  free_cores_[type].pop_back();
  task.staged = true;
  task.staged_ns = SteadyNowNs();
  spdlog::debug("task {}: staged on {} core {} before its producers finished", task.id, CoreTypeName(task.core_type),
                task.core);
}

// With mu_ held, after a core of `type` was freed and what it released was queued.
void Runtime::Impl::StageWaiting(CoreType type) {
  auto& waiting = stageable_[Index(type)];
  while (!waiting.empty() && ready_[Index(type)].empty() && free_cores_[Index(type)].size() > UnstagedCores(type)) {
    auto it = live_.find(waiting.front());
    waiting.pop_front();
    if (it == live_.end()) continue;
    Task& task = *it->second;
    if (!task.staged && task.pending > 0 && task.holding_back == 0) Stage(task);
  }
}

}  // namespace pypto::rt
