// The stall watchdog: a thread that wakes while kernels run and looks at what it can observe when
// nothing has started, finished or arrived at a barrier for a while. Two situations mean a kernel
// will not return on its own, since it waits for work that cannot run:
//  - work can be dispatched (a ready task, a free core) but every thread is inside a kernel: a
//    device would start it on its free core. After kStarveAfter (or a quarter of the timeout, if
//    less) each such task gets a thread of its own, so the blocks of a launch run side by side up
//    to the cores of their type whatever the host's thread count.
//  - every core of a type is held by running blocks of one launch while more of its blocks wait
//    for a core, for the whole scheduler timeout (upstream's SIMPLER_SCHEDULER_TIMEOUT_MS): the
//    running blocks wait for those that cannot start (a barrier, or a flag in global memory, among
//    blocks launched without sync_start). The run fails with SchedulerTimeout, as upstream's
//    watchdog fails it (S1, running-stalled), with the cause named; the running kernels are asked
//    to give up (CoreExecutor::Abort), so that the run ends instead of hanging.
//  - the running kernels make no progress: no task has started or finished and none of them has
//    changed what it can write (CoreExecutor::ProgressMark: its tensors and its core's buffers) for
//    the whole scheduler timeout. Upstream's watchdog fails such a run with SchedulerTimeout,
//    sub-class S1 (running-stalled): a kernel spinning on a flag nothing sets would otherwise hang
//    the run whatever else is free. The message names each running kernel, its task and core, and
//    what waits; the kernels are aborted.
// A kernel that is merely slow is never declared stalled: it keeps changing its buffers, so its mark
// moves. Where the executor cannot tell (no mark), only the launch check above applies.
// It also stops a run at Ctrl-C (run_interrupt.h): a kernel that loops forever would otherwise keep
// the process from ever seeing the signal. While no kernel runs, the orchestration's wait (Drain)
// looks for Ctrl-C itself.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "pypto/runtime/run_interrupt.h"
#include "runtime_impl.h"

namespace pypto::rt {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Kernels usually take microseconds to milliseconds on the simulator; a quarter of a second with no
// kernel starting or finishing while work waits for a thread is a kernel waiting for that work.
constexpr milliseconds kStarveAfter{250};

// "block 0-3 on AIV core 0-3, block 5 on AIV core 7": runs where block and core both count up are
// written as ranges.
std::string BlocksOnCores(const std::vector<std::pair<size_t, int>>& placed, CoreType type) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < placed.size();) {
    size_t j = i;
    while (j + 1 < placed.size() && placed[j + 1].first == placed[j].first + 1 &&
           placed[j + 1].second == placed[j].second + 1)
      ++j;
    if (i == j)
      parts.push_back(fmt::format("block {} on {} core {}", placed[i].first, CoreTypeName(type), placed[i].second));
    else
      parts.push_back(fmt::format("block {}-{} on {} core {}-{}", placed[i].first, placed[j].first,
                                  CoreTypeName(type), placed[i].second, placed[j].second));
    i = j + 1;
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// What CoreExecutor::Abort and ProgressMark are given for a running task.
KernelLaunch LaunchOf(const Task& task) {
  return KernelLaunch{
      .task_id = task.id,
      .mixed_group = task.mixed_group,
      .launch_id = task.launch && !task.launch->blocks.empty() ? task.launch->first_task : kInvalidTaskId,
      .func_id = task.func_id,
      .core_type = task.core_type,
      .core_index = task.core,
      .args = const_cast<int64_t*>(task.args.data()),
      .barrier = nullptr};
}

// "0-3, 5"
std::string Ranges(const std::vector<size_t>& values) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < values.size();) {
    size_t j = i;
    while (j + 1 < values.size() && values[j + 1] == values[j] + 1) ++j;
    parts.push_back(i == j ? fmt::format("{}", values[i]) : fmt::format("{}-{}", values[i], values[j]));
    i = j + 1;
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

// With mu_ held, as kernels start: the watchdog runs (or wakes) while kernels do.
void Runtime::Impl::NoteKernelStart() {
  ++progress_;
  if (!watchdog_started_) return StartWatchdog();
  if (watchdog_asleep_) watchdog_cv_->notify_one();
}

void Runtime::Impl::StartWatchdog() {
  watchdog_started_ = true;
  watchdog_ = std::thread([this] { WatchdogLoop(); });
}

void Runtime::Impl::WatchdogLoop() {
  std::unique_lock lock(mu_);
  const milliseconds timeout{std::max<int64_t>(1, options_.scheduler_timeout_ms)};
  const milliseconds starve_after = std::max(milliseconds{1}, std::min(kStarveAfter, timeout / 4));
  const milliseconds tick = std::clamp(starve_after / 4, milliseconds{1}, milliseconds{50});
  // How often the running kernels' progress marks are taken once things are quiet: each costs a pass
  // over what they can write.
  const milliseconds mark_every = std::max(starve_after, timeout / 4);
  uint64_t seen = progress_;
  Clock::time_point since = Clock::now();
  std::optional<uint64_t> mark;  // the running kernels' marks when `since` was last moved by them
  Clock::time_point marked;
  while (!stopping_) {
    if (running_ == 0 || error_) {
      watchdog_asleep_ = true;
      watchdog_cv_->wait(lock, [&] { return stopping_ || (running_ > 0 && !error_); });
      watchdog_asleep_ = false;
      seen = progress_;
      since = Clock::now();
      mark.reset();
      continue;
    }
    watchdog_cv_->wait_for(lock, tick);
    if (RunInterrupted() && !error_) {
      StopForInterrupt();
      continue;
    }
    const Clock::time_point now = Clock::now();
    if (stopping_ || error_ || progress_ != seen) {
      seen = progress_;
      since = now;
      mark.reset();
      continue;
    }
    auto quiet = std::chrono::duration_cast<milliseconds>(now - since);
    if (quiet >= starve_after) GiveThreadsToWaitingWork();
    if (quiet >= starve_after && (!mark || now - marked >= mark_every)) {
      // A kernel that changed what it can write since the last mark is making progress: the quiet
      // spell starts again. The first mark starts it too, as nothing is known of before it.
      const std::optional<uint64_t> now_mark = RunningProgressMark();
      marked = now;
      if (now_mark && now_mark != mark) {
        mark = now_mark;
        since = now;
        continue;
      }
      if (!now_mark) mark.reset();
    }
    if (quiet >= timeout) CheckRunningStall(quiet.count(), mark.has_value());
  }
}

// With mu_ held: every running kernel's mark, combined; nullopt when one has none.
std::optional<uint64_t> Runtime::Impl::RunningProgressMark() {
  std::vector<const Task*> running;
  for (const auto& [id, task] : live_)
    if (task->running) running.push_back(task.get());
  if (running.empty()) return std::nullopt;
  std::ranges::sort(running, {}, &Task::id);
  uint64_t combined = 0xcbf29ce484222325ull;
  for (const Task* task : running) {
    const std::optional<uint64_t> mark = executor_.ProgressMark(LaunchOf(*task));
    if (!mark) return std::nullopt;
    combined = (combined ^ *mark ^ task->id) * 0x100000001b3ull;
  }
  return combined;
}

// With mu_ held, after a quiet spell: work that could start on a free core but has no thread, because
// every thread is inside a kernel that has not returned, gets threads of its own.
void Runtime::Impl::GiveThreadsToWaitingWork() {
  const size_t wanted = DispatchableCount();
  if (wanted == 0) return;
  if (idle_workers_ > 0) return work_cv_->notify_all();
  if (caller_first_ && idle_waiters_ > 0) return idle_cv_.notify_all();
  size_t started = 0;
  if (!workers_started_ && worker_count_ > 0) {
    StartWorkers();
    started = static_cast<size_t>(worker_count_);
  }
  for (; started < wanted; ++started) workers_.emplace_back([this] { WorkerLoop(); });
  spdlog::debug("runtime: no kernel started or finished for a while: {} more threads for waiting work", wanted);
}

// With mu_ held, after the scheduler timeout without progress: blocks of one launch that wait for a
// core their siblings hold (whether or not the kernels can be watched), else, when every running
// kernel was watched and none changed anything, upstream's S1.
void Runtime::Impl::CheckRunningStall(int64_t quiet_ms, bool kernels_watched) {
  for (CoreType type : {CoreType::AIC, CoreType::AIV}) {
    if (!free_cores_[Index(type)].empty()) continue;
    for (const Task* waiting : ready_[Index(type)]) {
      const Launch* launch = waiting->launch.get();
      if (!launch || launch->blocks.size() < 2 || waiting->cohort) continue;
      const auto running = std::ranges::count_if(launch->blocks, [](const Task* b) { return b && b->running; });
      if (running < CoreCount(type)) continue;
      RecordError({FatalCode::SchedulerTimeout, RunningStallMessage(*launch, type, quiet_ms)});
      for (const Task* block : launch->blocks) {
        if (!block || !block->running) continue;
        KernelLaunch running = LaunchOf(*block);
        running.barrier = this;
        executor_.Abort(running);
      }
      return;
    }
  }
  if (!kernels_watched || running_ == 0) return;
  RecordError({FatalCode::SchedulerTimeout, RunningStalledMessage(quiet_ms)});
  for (const auto& [id, task] : live_) {
    if (!task->running) continue;
    KernelLaunch running = LaunchOf(*task);
    running.barrier = this;
    executor_.Abort(running);
  }
}

// Upstream's S1 (running-stalled), with what it prints (the stuck tasks and their cores) said in
// words: each running kernel, grouped by launch, what waits for a core, and what to look for.
std::string Runtime::Impl::RunningStalledMessage(int64_t quiet_ms) const {
  std::vector<const Task*> running;
  for (const auto& [id, task] : live_)
    if (task->running) running.push_back(task.get());
  std::ranges::sort(running, {}, &Task::id);
  std::vector<std::string> kernels;
  std::vector<const Launch*> seen_launches;
  for (const Task* task : running) {
    std::string kernel = executor_.KernelName(task->func_id);
    const Launch* launch = task->launch.get();
    if (launch && launch->blocks.size() > 1) {
      if (std::ranges::find(seen_launches, launch) != seen_launches.end()) continue;
      seen_launches.push_back(launch);
      std::vector<std::pair<size_t, int>> placed;
      size_t left = 0;
      for (size_t b = 0; b < launch->blocks.size(); ++b) {
        const Task* block = launch->blocks[b];
        if (block && block->running) placed.emplace_back(b, block->core);
        else if (block) ++left;
      }
      kernels.push_back(fmt::format("task {} ({}{} blocks: {}{})", launch->first_task,
                                    kernel.empty() ? "" : fmt::format("kernel '{}', ", kernel), launch->blocks.size(),
                                    BlocksOnCores(placed, task->core_type),
                                    left ? fmt::format("; {} more wait for a core", left) : ""));
    } else {
      kernels.push_back(fmt::format("task {} ({}{} core {})", task->id,
                                    kernel.empty() ? "" : fmt::format("kernel '{}' on ", kernel),
                                    CoreTypeName(task->core_type), task->core));
    }
  }
  const size_t waiting = ready_[Index(CoreType::AIC)].size() + ready_[Index(CoreType::AIV)].size();
  return fmt::format(
      "no progress for {} ms (scheduler timeout, SIMPLER_SCHEDULER_TIMEOUT_MS), sub-class S1 (running-stalled): {} "
      "{}, while no task started or finished; "
      "{} of {} AIC and {} of {} AIV cores are free, {} ready task{} wait{} for one. A kernel that waits for a "
      "flag, a barrier or an event that nothing sets never returns: find the loop in it that waits and what "
      "should have ended it. A kernel that is merely slow keeps changing its buffers and is waited for; one that "
      "computes longer than the timeout without writing anything needs a larger SIMPLER_SCHEDULER_TIMEOUT_MS",
      quiet_ms, fmt::join(kernels, ", "),
      kernels.size() == 1 ? "is running and has changed neither its tensors nor its core's buffers"
                          : "are running and none of them has changed its tensors or its core's buffers",
      free_cores_[Index(CoreType::AIC)].size(), CoreCount(CoreType::AIC),
      free_cores_[Index(CoreType::AIV)].size(), CoreCount(CoreType::AIV), waiting, waiting == 1 ? "" : "s",
      waiting == 1 ? "s" : "");
}

// With mu_ held, once SIGINT arrived during the run: it fails naming the kernels that were running,
// and each is asked to give up, as a stalled launch's are.
void Runtime::Impl::StopForInterrupt() {
  std::vector<const Task*> running;
  for (const auto& [id, task] : live_)
    if (task->running) running.push_back(task.get());
  std::ranges::sort(running, {}, &Task::id);
  std::vector<std::string> names;
  for (const Task* task : running) {
    const std::string kernel = executor_.KernelName(task->func_id);
    names.push_back(fmt::format("task {} ({}{} core {})", task->id,
                                kernel.empty() ? "" : fmt::format("kernel '{}' on ", kernel),
                                CoreTypeName(task->core_type), task->core));
  }
  RecordError({FatalCode::Interrupted,
               fmt::format("interrupted (SIGINT, Ctrl-C) while {}; the run stopped there, its outputs are "
                           "incomplete",
                           names.empty() ? std::string("no kernel ran")
                                         : fmt::format("{} ran", fmt::join(names, ", ")))});
  for (const Task* task : running) {
    KernelLaunch launch = LaunchOf(*task);
    launch.barrier = this;
    executor_.Abort(launch);
  }
}

std::string Runtime::Impl::RunningStallMessage(const Launch& launch, CoreType type, int64_t quiet_ms) const {
  std::vector<std::pair<size_t, int>> running;
  std::vector<size_t> waiting, finished;
  for (size_t b = 0; b < launch.blocks.size(); ++b) {
    const Task* task = launch.blocks[b];
    if (!task)
      finished.push_back(b);
    else if (task->running)
      running.emplace_back(b, task->core);
    else
      waiting.push_back(b);
  }
  std::string kernel = executor_.KernelName(launch.func_id);
  if (kernel.empty()) kernel = launch.kernel;
  const int cores = CoreCount(type);
  std::string text = fmt::format(
      "task {} ({}func_id {}): no progress for {} ms (scheduler timeout, SIMPLER_SCHEDULER_TIMEOUT_MS): {} of its {} "
      "blocks hold all {} {} cores and none returns ({}), while block {} {} for a core",
      launch.first_task, kernel.empty() ? "" : fmt::format("kernel '{}', ", kernel), launch.func_id, quiet_ms,
      running.size(), launch.blocks.size(), cores, CoreTypeName(type), BlocksOnCores(running, type),
      Ranges(waiting), waiting.size() == 1 ? "waits" : "wait");
  if (!finished.empty()) text += fmt::format("; block {} finished", Ranges(finished));
  text += fmt::format(
      ". Blocks of one launch that wait for each other (a barrier, or a flag in global memory) deadlock when not "
      "all of them hold a core at once: without sync_start the runtime starts blocks in waves, as cores free "
      "('CCE Extern Kernel Programming', section 1). Launch it with pl.spmd(..., sync_start=True) and at most {} "
      "blocks, so that every block holds a core at the same time",
      cores);
  return text;
}

}  // namespace pypto::rt
