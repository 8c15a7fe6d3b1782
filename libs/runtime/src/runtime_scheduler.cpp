// Dispatch: the ready queues, the worker loop, the waiting thread's share of the work under
// CallerFirst (Drain, helper wake-ups), running a task on its core (with the observer), and retiring
// it, which frees its core and releases its dependents. The policies above it (co-started launches,
// early resolve, barriers, pipes) are in files of their own.
#include "pypto/runtime/task_observer.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <utility>

#include "mixed_block.h"
#include "pypto/runtime/run_interrupt.h"
#include "runtime_impl.h"

namespace pypto::rt {

// Called with mu_ held (the new threads block on it until the caller lets go).
void Runtime::Impl::StartWorkers() {
  if (workers_started_) return;
  workers_started_ = true;
  workers_.reserve(static_cast<size_t>(worker_count_));
  for (int i = 0; i < worker_count_; ++i) workers_.emplace_back([this] { WorkerLoop(); });
  if (caller_first_) spdlog::debug("runtime: started {} worker threads", worker_count_);
}

bool Runtime::Impl::WorthAHelper() const {
  const std::optional<CoreType> type = NextDispatchable();
  if (!type) return false;
  const auto average = task_ns_.find(ready_[Index(*type)].front()->func_id);
  return average == task_ns_.end() || average->second >= options_.helper_min_task_ns;
}

void Runtime::Impl::WakeHelper() {
  if (!WorthAHelper()) return;
  if (idle_waiters_ > 0) {
    idle_cv_.notify_one();
  } else if (idle_workers_ > 0) {
    work_cv_->notify_one();
  } else if (!workers_started_) {
    StartWorkers();  // they look for work as soon as they get the lock
  }
  // Otherwise every thread is busy, and each looks for work again when its task is done.
}

// The orchestration has submitted everything. Its wait ends the run at once when nothing runs and
// nothing can start (runtime_idle_stall.cpp), and at Ctrl-C: the watchdog sees SIGINT only while
// kernels run, so the wait looks too, every kDrainPoll.
void Runtime::Impl::Drain(std::unique_lock<std::mutex>& lock) {
  constexpr std::chrono::milliseconds kDrainPoll{50};
  while (!live_.empty()) {
    if (caller_first_) {
      if (std::optional<CoreType> type = NextDispatchable()) {
        DispatchOne(lock, *type);
        continue;
      }
    }
    if (IdleStalled()) {
      FailIdleStall();
      continue;
    }
    if (RunInterrupted() && !error_) StopForInterrupt();
    // Everything left is running elsewhere or waiting for what is (or, Eager, a worker takes it):
    // sleep until that changes.
    if (caller_first_) ++idle_waiters_;
    idle_cv_.wait_for(lock, kDrainPoll);
    if (caller_first_) --idle_waiters_;
  }
}

void Runtime::Impl::WaitForProgress(std::unique_lock<std::mutex>& lock) {
  if (caller_first_) {
    if (std::optional<CoreType> type = NextDispatchable()) return DispatchOne(lock, *type);
    ++idle_waiters_;
    idle_cv_.wait(lock);
    --idle_waiters_;
    return;
  }
  idle_cv_.wait(lock);
}

// With mu_ held: a task that waits for nothing more is queued for a core, or retired at once if it
// is a dummy. Enqueue wakes nobody (Retire does that once for all it released); MakeReady, for a
// newly submitted task, does.
// A block of a sync_start launch is queued only with the last of them, as its cohort's first task.
void Runtime::Impl::Enqueue(Task& task) {
  if (task.dummy) return Retire(task, -1);
  if (task.cohort) {
    if (++task.cohort->ready < task.cohort->size) return;
    Task& leader = *task.cohort->tasks.front();
    ready_[Index(leader.core_type)].push_back(&leader);
    return;
  }
  // A staged task holds its core already: it goes first, as the doorbell starts it at once.
  if (task.staged)
    ready_[Index(task.core_type)].push_front(&task);
  else
    ready_[Index(task.core_type)].push_back(&task);
}

void Runtime::Impl::MakeReady(Task& task) {
  if (task.dummy) return Retire(task, -1);
  Enqueue(task);
  if (task.cohort && task.cohort->ready < task.cohort->size) return;  // queued with the last
  if (!caller_first_) {
    work_cv_->notify_all();
  } else if (idle_waiters_ > 0 || DispatchableCount() >= 2) {
    // A sleeping waiter takes it; otherwise the thread that will wait takes one and a worker the rest.
    WakeHelper();
  }
}

void Runtime::Impl::WorkerLoop() {
  std::unique_lock lock(mu_);
  while (true) {
    std::optional<CoreType> type;
    ++idle_workers_;
    work_cv_->wait(lock, [&] { return stopping_ || (type = NextDispatchable()).has_value(); });
    --idle_workers_;
    if (stopping_) return;  // the destructor only stops workers once no task is live
    DispatchOne(lock, *type);
  }
}

void Runtime::Impl::DispatchOne(std::unique_lock<std::mutex>& lock, CoreType type) {
  Task& task = *ready_[Index(type)].front();
  ready_[Index(type)].pop_front();
  if (task.cohort) return DispatchCohort(lock, task);
  int core = task.core;
  if (!task.staged) {
    core = free_cores_[Index(type)].back();
    free_cores_[Index(type)].pop_back();
  }
  if (task.early_resolve) Started(task);
  if (caller_first_ && NextDispatchable()) WakeHelper();  // work left over for another thread
  // Threads waiting at a barrier are not free to take it: left over work gets a thread of its own.
  if (barrier_waiters_ > 0 && NextDispatchable()) ProvideThread();

  if (error_) {
    spdlog::debug("task {}: skipped after a fatal error", task.id);
  } else {
    task.core = core;
    task.running = true;
    ++running_;
    NoteKernelStart();
    lock.unlock();
    const auto start = caller_first_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    pypto::expected<void, FatalError> result = RunOnCore(task, core);
    const auto end = caller_first_ ? std::chrono::steady_clock::now() : start;
    lock.lock();
    --running_;
    if (caller_first_) {
      const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count();
      auto [average, first] = task_ns_.try_emplace(task.func_id, ns);
      if (!first) average->second += (ns - average->second) / 4;
    }
    if (result)
      ++completed_;
    else
      RecordError(std::move(result.error()));
  }
  Retire(task, core);
}

// A staged task whose producers have finished; else the ready type whose oldest task has the lowest id
// and a free core, which keeps roughly program order.
std::optional<CoreType> Runtime::Impl::NextDispatchable() const {
  for (CoreType type : {CoreType::AIC, CoreType::AIV})
    if (!ready_[Index(type)].empty() && ready_[Index(type)].front()->staged) return type;
  std::optional<CoreType> best;
  for (CoreType type : {CoreType::AIC, CoreType::AIV}) {
    const auto& queue = ready_[Index(type)];
    if (queue.empty() || free_cores_[Index(type)].empty()) continue;
    // A cohort at the front waits for all its cores, and what is queued behind it waits too, so that
    // cores freeing one by one go to it rather than to later tasks.
    if (queue.front()->cohort && !CohortFits(*queue.front())) continue;
    if (!best || queue.front()->id < ready_[Index(*best)].front()->id) best = type;
  }
  return best;
}

size_t Runtime::Impl::DispatchableCount() const {
  size_t count = 0;
  for (CoreType type : {CoreType::AIC, CoreType::AIV}) {
    const auto& queue = ready_[Index(type)];
    size_t staged = 0;  // at the front, on cores of their own
    while (staged < queue.size() && queue[staged]->staged) ++staged;
    count += staged + std::min(queue.size() - staged, free_cores_[Index(type)].size());
  }
  return count;
}

// Runs without mu_: the task and its core belong to this worker until it retires the task.
pypto::expected<void, FatalError> Runtime::Impl::RunOnCore(Task& task, int core) {
  // Upstream numbers AIVs in (AIV0, AIV1) pairs per cluster; the lane is the core's parity.
  task.global.sub_block_id = task.lane >= 0 ? task.lane : task.core_type == CoreType::AIV ? core % 2 : 0;
  const KernelLaunch launch{
      .task_id = task.id,
      .mixed_group = task.mixed_group,
      .launch_id = task.launch && !task.launch->blocks.empty() ? task.launch->first_task : kInvalidTaskId,
      .func_id = task.func_id,
      .core_type = task.core_type,
      .core_index = core,
      .args = task.args.data(),
      .barrier = this,
  };
  spdlog::debug("task {}: func_id {} starts on {} core {}", task.id, task.func_id, CoreTypeName(task.core_type),
                core);
  if (options_.observer) return RunObserved(task, launch);
  return Execute(task, launch);
}

pypto::expected<void, FatalError> Runtime::Impl::Execute(const Task& task, const KernelLaunch& launch) {
  try {
    auto result = executor_.Execute(launch);
    // Not logged as an error here: WaitAll hands it to the caller, who reports it.
    if (!result) spdlog::debug("task {}: failed: {}", task.id, result.error().str());
    return result;
  } catch (const std::exception& e) {
    // The executor's contract is to return errors; an exception must still not kill the worker.
    return pypto::unexpected(FatalError{
        FatalCode::Internal, fmt::format("task {} (func_id {}): executor threw: {}", task.id, task.func_id, e.what())});
  }
}

// The observer sees the task's arguments before its kernel runs and, if it succeeds, after.
pypto::expected<void, FatalError> Runtime::Impl::RunObserved(const Task& task, const KernelLaunch& launch) {
  ObservedTask observed{.id = task.id,
                        .func_id = task.func_id,
                        .core_type = task.core_type,
                        .core_index = launch.core_index,
                        .tensors = task.observed_args,
                        .scalars = std::span<const int64_t>(task.args).subspan(task.tensors.size(), task.scalar_count),
                        .staged_ns = task.staged ? task.staged_ns : 0};
  options_.observer->BeforeDispatch(observed);
  observed.start_ns = SteadyNowNs();
  auto result = Execute(task, launch);
  observed.end_ns = SteadyNowNs();
  if (result) options_.observer->AfterCompletion(observed);
  return result;
}

// A fill task's work, done as it retires: every task it waits for has finished, and none waiting for it
// has started.
void Runtime::Impl::FillOutputs(const Task& task) {
  for (const ChipTensor& tensor : task.tensors) {
    const size_t element_size = ElementSize(tensor.dtype);
    uint64_t count = 1;
    for (uint32_t d = 0; d < tensor.ndims && d < PYPTO_MAX_TENSOR_DIMS; ++d) count *= tensor.shapes[d];
    auto* origin = reinterpret_cast<std::byte*>(tensor.buffer_addr) + tensor.start_offset * element_size;
    FillElements(origin, count, element_size, *task.fill);
  }
}

// Called with mu_ held. Frees the core and wakes what this task was holding back.
void Runtime::Impl::Retire(Task& task, int core) {
  ++progress_;
  if (task.fill) FillOutputs(task);
  if (!task.dummy) free_cores_[Index(task.core_type)].push_back(core);
  for (const Task::Access& access : task.accesses) {
    if (!access.live || graph_) continue;  // a later write covering it has taken its place, or it is kept
    auto buffer = accesses_.find(access.buffer_addr);  // there while it holds a live access
    (access.write ? buffer->second.writes : buffer->second.reads).Erase(access.entry);
    if (buffer->second.reads.empty() && buffer->second.writes.empty()) accesses_.erase(buffer);
  }
  if (task.launch && !task.launch->blocks.empty() && !task.dummy)
    task.launch->blocks[static_cast<size_t>(task.local.block_idx)] = nullptr;
  if (task.mixed_launch)
    task.mixed_launch->members[static_cast<size_t>(task.local.block_idx) * task.mixed_launch->members_per_block +
                               task.member] = nullptr;
  if (task.launch && --task.launch->blocks_left == 0) FinishLaunch(*task.launch);
  if (!task.leases.empty()) ReleaseLeases(task);
  if (task.mixed_block) {
    // A member that finished may have been the one its peers wait for at a pipe.
    task.mixed_block->member(task.member).finished = true;
    CheckPipeStall(*task.mixed_block);
  }
  // A dependent that becomes ready may be a dummy, retired here at once: none of those touch `task`.
  for (Task* dependent : task.dependents) {
    const bool last_holding_back = !task.released_early && --dependent->holding_back == 0;
    if (--dependent->pending == 0)
      Enqueue(*dependent);
    else if (last_holding_back)
      Stage(*dependent);
  }
  if (!task.dummy) StageWaiting(task.core_type);  // its core may be one a stageable task waits for
  std::unique_ptr<Task> finished = std::move(live_.extract(task.id).mapped());
  if (graph_) {
    finished->retired = true;
    retired_.push_back(std::move(finished));
  } else {
    Recycle(std::move(finished));
  }
  if (!caller_first_) {
    work_cv_->notify_all();
    if (live_.empty()) idle_cv_.notify_all();
  } else if (live_.empty()) {
    idle_cv_.notify_all();  // the waiters return
  } else if (DispatchableCount() >= 2) {
    WakeHelper();  // this thread takes one of them next
  }
  if (barrier_waiters_ > 0) CheckBarrierStall();  // a block that finished may have been awaited
}

void Runtime::Impl::RecordError(FatalError error) {
  if (error_) return;  // the first error wins
  spdlog::debug("runtime: {}", error.str());
  error_ = std::move(error);
  barrier_cv_.notify_all();  // blocks waiting at a barrier give up
}

}  // namespace pypto::rt
