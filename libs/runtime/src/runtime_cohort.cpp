// Co-started launches (launch_spec.require_sync_start): submitting one as a cohort behind a gate,
// and dispatching a cohort (or the members of a mixed block) onto all the cores it needs at once,
// each task on a thread of its own, released together.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstddef>
#include <latch>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "mixed_block.h"
#include "runtime_impl.h"

namespace pypto::rt {

// ---- Co-started launches (launch_spec.require_sync_start) ------------------------------------------
// Upstream stages every block of such a launch on a core and then starts them all with one doorbell.
// Here the blocks form a Cohort: one gate waits for what the arguments wait for, the blocks wait only
// for the gate (never for each other, although they share their arguments), and a join after them
// holds the arguments' accesses, so later tasks wait for every block. The cohort is dispatched once
// all the cores it needs are free, each block on a thread of its own, released together.

// With mu_ held: a launch of `blocks` co-started tasks needs that many cores of `core` at once.
pypto::expected<void, FatalError> Runtime::Impl::CheckSyncStart(CoreType core, int32_t func_id, int32_t blocks) {
  const int cores = CoreCount(core);
  if (blocks <= cores) return {};
  const bool clusters = core == CoreType::AIC;
  RecordError({FatalCode::RequireSyncStartInvalid,
               fmt::format("task {} (func_id {}) requires sync_start for {} blocks, but there are only {} {}: "
                           "every block of a sync_start launch must hold a core at the same time; launch at most "
                           "{} blocks (pl.system.{}())",
                           next_id_, func_id, blocks, cores, clusters ? "clusters" : "AIV cores", cores,
                           clusters ? "available_cluster_count" : "available_aiv_count")});
  return pypto::unexpected(*error_);
}

// With mu_ held: a dummy task waiting for what `args` wait for, or null when they wait for nothing
// (a dummy with nothing to wait for would retire at once).
Task* Runtime::Impl::AddGate(const TaskArgs& args) {
  auto candidate = BlankTask();
  candidate->dummy = true;
  candidate->id = next_id_;
  AddDependencies(*candidate, args);
  if (candidate->pending == 0) {
    Recycle(std::move(candidate));
    return nullptr;
  }
  return &AddTask(std::move(candidate));
}

pypto::expected<TaskId, FatalError> Runtime::Impl::SubmitCohort(CoreType core, int32_t func_id,
                                                                const TaskArgs& args) {
  const int32_t blocks = args.launch_spec.block_num;
  std::unique_lock lock(mu_);
  if (auto ok = CheckSubmit(core, func_id, args); !ok) return pypto::unexpected(ok.error());
  if (auto ok = CheckSyncStart(core, func_id, blocks); !ok) return pypto::unexpected(ok.error());
  auto slot = TakeSlot(lock, func_id, blocks);
  if (!slot) return pypto::unexpected(slot.error());
  if (auto ok = ChargeDepPool(func_id, args); !ok) return pypto::unexpected(ok.error());
  const std::shared_ptr<Launch> launch = std::move(*slot);
  launch->blocks.resize(static_cast<size_t>(blocks));
  launch->func_id = func_id;

  Task* gate = AddGate(args);
  auto cohort = std::make_shared<Cohort>();
  cohort->size = static_cast<size_t>(blocks);
  cohort->cores[Index(core)] = blocks;
  std::vector<std::unique_ptr<Task>> tasks;
  for (int32_t block = 0; block < blocks; ++block) {
    auto task = MakeTask(BlankTask(), core, func_id, args, block, options_.observer != nullptr);
    task->launch = launch;
    task->cohort = cohort;
    cohort->tasks.push_back(task.get());
    launch->blocks[static_cast<size_t>(block)] = task.get();
    tasks.push_back(std::move(task));
  }
  auto join = BlankTask();
  join->dummy = true;
  launch->first_task = next_id_;
  for (auto& task : tasks) {
    task->id = next_id_;
    if (gate) AddEdge(*gate, *task);
    task->dependents.push_back(join.get());
    ++join->pending;
    ++join->holding_back;  // until the block retires: co-started blocks are never released early
    AddTask(std::move(task));
  }
  launch->submitted = true;
  join->id = next_id_;
  RegisterAccesses(*join, args);
  spdlog::debug("task {}: submitted func_id {} ({}) on {} co-started blocks", launch->first_task, func_id,
                CoreTypeName(core), blocks);
  const TaskId id = AddTask(std::move(join)).id;
  NoteSubmitted(args, id);
  return id;
}

bool Runtime::Impl::CohortFits(const Task& leader) const {
  for (CoreType type : {CoreType::AIC, CoreType::AIV})
    if (static_cast<size_t>(leader.cohort->cores[Index(type)]) > free_cores_[Index(type)].size()) return false;
  return true;
}

// With mu_ held, the cohort's cores free (NextDispatchable checked CohortFits). A latch holds every
// block until all are on their threads: none starts before the last can. Each block's thread retires
// its own task, so a block that is done no longer counts as running while the others still are.
void Runtime::Impl::DispatchCohort(std::unique_lock<std::mutex>& lock, Task& leader) {
  const std::shared_ptr<Cohort> cohort = leader.cohort;
  for (Task* task : cohort->tasks) {
    auto& free = free_cores_[Index(task->core_type)];
    task->core = free.back();
    free.pop_back();
    if (task->mixed_block) task->mixed_block->member(task->member).core = task->core;
  }
  if (caller_first_ && NextDispatchable()) WakeHelper();  // work left over for another thread
  const size_t n = cohort->tasks.size();
  if (error_) {
    spdlog::debug("task {}: co-started launch skipped after a fatal error", leader.id);
    for (Task* task : cohort->tasks) Retire(*task, task->core);
    return;
  }
  running_ += static_cast<int>(n);
  for (Task* task : cohort->tasks) task->running = true;
  NoteKernelStart();
  lock.unlock();
  std::latch start(static_cast<std::ptrdiff_t>(n));
  auto block = [&](size_t i) {
    Task& task = *cohort->tasks[i];
    const int core = task.core;
    start.arrive_and_wait();
    pypto::expected<void, FatalError> result = RunOnCore(task, core);
    std::lock_guard hold(mu_);
    --running_;
    if (result)
      ++completed_;
    else
      RecordError(std::move(result.error()));
    Retire(task, core);
  };
  std::vector<std::thread> threads;
  threads.reserve(n - 1);
  for (size_t i = 1; i < n; ++i) threads.emplace_back(block, i);
  block(0);
  for (std::thread& thread : threads) thread.join();
  lock.lock();
}

}  // namespace pypto::rt
