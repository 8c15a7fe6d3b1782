// The private declaration of Runtime::Impl, the scheduler behind the public Runtime: its state and
// every member, whose definitions are spread over the runtime_*.cpp files by concept (submits,
// scopes, dependencies, dispatch, co-started launches, early resolve, cross-core pipes, syncall).
//
// The scheduler: tasks wait for the earlier tasks that write what they touch, then run on a free
// logical core of their type, on a pool of worker threads (and, under CallerFirst, the waiting one).
//
// One mutex guards all scheduling state; kernels run outside it. A task's life:
//   Submit   -> its dependencies are the unfinished earlier writers of overlapping bytes (RAW, WAW);
//               it becomes ready when it has none left. In a manual scope only the explicit ones.
//   dispatch -> a running thread takes the oldest ready task that has a free core of its type.
//   retire   -> the core is freed, its writes are forgotten, its dependents lose one dependency.
//               Recording the dependency graph (RuntimeOptions::dep_graph), its accesses are kept
//               until Reset instead: later submits find it and record the edge, without waiting.
// Task windows: every submit (all blocks of an SPMD launch together) takes a slot in the ring of its
// scope's depth and gives it back once it has finished and its scope has ended. A submit that finds
// task_window - 1 slots in use waits (dispatching, under CallerFirst) for one; if every used slot
// belongs to a scope still open, the orchestration would wait for itself, and the run fails with
// ScopeDeadlock at once instead of hanging.
// Early resolve (TaskArgs::set_allow_early_resolve, on producers): a task whose unfinished producers
// all allow it, and have all started (every block of their launches), is staged on an idle core: the
// core is its own from then on, and it starts there as soon as the last producer retires, ahead of
// every task queued normally. Only cores nobody queued for are taken (normal work before early work),
// and since what a staged task waits for is already running, staging can never hold back its own
// producers. See runtime_early_resolve.cpp.
// After the first fatal error, dispatched tasks are retired without running, so the run drains and
// WaitAll returns that error. The error stays latched: a failed Runtime refuses further submits
// until Reset starts a new run.
//
// Who dispatches (RuntimeOptions::dispatch):
//   Eager       workers, all started in the constructor, are woken for every ready task; the waiting
//               thread sleeps until the run is idle.
//   CallerFirst a thread waiting for the run (WaitAll, Reset, the destructor) dispatches too. After a
//               thread takes a task, or retires one and is about to take the next, any dispatchable
//               task left over wakes one more thread: a sleeping waiter, else an idle worker; the
//               workers are started the first time that happens. So a run with no parallelism stays
//               on the caller, and a wide one fans out one wake-up at a time. A woken thread that
//               finds the task already taken goes back to sleep. Wake-ups are only spent on tasks
//               whose kernel has taken at least helper_min_task_ns on average (measured per func_id
//               as tasks run; a kernel not seen yet counts as long): tiny tasks stay on the threads
//               that are awake, which finish them sooner than a woken thread could start.
#pragma once

#include <array>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "pypto/runtime/dep_graph.h"
#include "pypto/runtime/runtime.h"
#include "runtime_fork.h"
#include "runtime_task.h"

namespace pypto::rt {

class MixedBlock;  // mixed_block.h
struct PipeWait;   // mixed_block.h

class Runtime::Impl final : public LaunchBarrier, private ForkAware {
 public:
  Impl(RuntimeOptions options, CoreExecutor& executor);
  ~Impl();

  pypto::expected<TaskId, FatalError> Submit(CoreType core, int32_t func_id, const TaskArgs& args);
  pypto::expected<TaskId, FatalError> SubmitGraphed(CoreType core, int32_t func_id, const TaskArgs& args);
  pypto::expected<TaskId, FatalError> SubmitMixedGraphed(const MixedKernels& kernels, const TaskArgs& args);
  pypto::expected<TaskId, FatalError> SubmitDummyGraphed(const TaskArgs& args, std::optional<uint64_t> fill = {});
  pypto::expected<TaskId, FatalError> SubmitMixed(const MixedKernels& kernels, const TaskArgs& args);
  pypto::expected<TaskId, FatalError> SubmitDummy(const TaskArgs& args, std::optional<uint64_t> fill = {});
  pypto::expected<void, FatalError> SyncAll(const KernelLaunch& launch, std::string_view kernel,
                                            std::string_view call) override;
  pypto::expected<void, FatalError> PipePush(const KernelLaunch& launch, std::string_view kernel, const PipeRef& pipe,
                                             std::span<const std::byte> tile) override;
  pypto::expected<void, FatalError> PipePop(const KernelLaunch& launch, std::string_view kernel, const PipeRef& pipe,
                                            std::span<std::byte> tile) override;
  pypto::expected<void, FatalError> PipeFree(const KernelLaunch& launch, std::string_view kernel,
                                             const PipeRef& pipe) override;
  pypto::expected<void, FatalError> EventSet(const KernelLaunch& launch, std::string_view kernel,
                                             const EventRef& event) override;
  pypto::expected<void, FatalError> EventWait(const KernelLaunch& launch, std::string_view kernel,
                                              const EventRef& event) override;
  pypto::expected<void, FatalError> ScopeBegin(ScopeMode mode);
  void ScopeEnd();
  pypto::expected<void, FatalError> WaitAll();
  void Reset();
  size_t tasks_completed() const;
  pypto::expected<HeapBlock, FatalError> HeapAllocate(uint64_t bytes, size_t ring, std::string_view name);
  void HeapRelease(HeapBlock block, std::span<const TaskId> users);
  uint64_t heap_used(size_t ring) const;

 private:
  static size_t Index(CoreType type) { return static_cast<size_t>(type); }
  size_t UnstagedCores(CoreType type) const;  // runtime_early_resolve.cpp
  int CoreCount(CoreType type) const { return type == CoreType::AIC ? options_.aic_cores : options_.aiv_cores; }

  void BeforeFork() override { mu_.lock(); }
  void AfterForkInParent() override { mu_.unlock(); }
  void AfterForkInChild() override;

  // With mu_ held: checks a task's arguments and core type; a refusal is latched as the run's error.
  pypto::expected<void, FatalError> CheckSubmit(CoreType core, int32_t func_id, const TaskArgs& args);
  TaskId AddBlock(CoreType core, int32_t func_id, const TaskArgs& args, const std::shared_ptr<Launch>& launch,
                  int32_t block_idx, Task* gate, Task* join = nullptr);
  // With mu_ held: a blank task, a spare one when there is one.
  std::unique_ptr<Task> BlankTask();
  // With mu_ held: blanks a retired task and keeps it for BlankTask, vectors' memory included.
  void Recycle(std::unique_ptr<Task> task);
  // With mu_ held: gives the task its id and makes it live (ready if it waits for nothing).
  Task& AddTask(std::unique_ptr<Task> task);
  void MakeReady(Task& task);
  void Enqueue(Task& task);
  void AddDependencies(Task& task, const TaskArgs& args);
  void AddEdge(Task& producer, Task& consumer);
  // The dependency graph (RuntimeOptions::dep_graph), with mu_ held. Graphed runs `submit` (one public
  // submit) as one node. GraphEdge records an edge of the current submit from the task `pred` names.
  template <typename F>
  pypto::expected<TaskId, FatalError> Graphed(const MixedKernels& kernels, const TaskArgs& args, F submit);
  void GraphEdge(TaskId pred, DepSource source, int32_t arg);
  void ForgetRetired();
  void RegisterAccesses(Task& task, const TaskArgs& args);

  // sync_start launches (runtime_cohort.cpp).
  pypto::expected<void, FatalError> CheckSyncStart(CoreType core, int32_t func_id, int32_t blocks);
  pypto::expected<TaskId, FatalError> SubmitCohort(CoreType core, int32_t func_id, const TaskArgs& args);
  Task* AddGate(const TaskArgs& args);
  bool CohortFits(const Task& leader) const;
  void DispatchCohort(std::unique_lock<std::mutex>& lock, Task& leader);
  // syncall barriers (runtime_syncall.cpp): a thread for work nobody can take while threads wait at barriers, and the
  // check that fails the run when no barrier can ever complete.
  void ProvideThread();
  void CheckBarrierStall();
  std::string BarrierStallMessage(const Launch& launch) const;
  std::string MixedBarrierStallMessage(const Launch& launch) const;
  int PeerWaiters() const;
  // The stall watchdog (runtime_watchdog.cpp): threads for work that waits behind kernels which do
  // not return, and the SchedulerTimeout of a launch whose blocks wait for each other.
  void NoteKernelStart();
  void StartWatchdog();
  void WatchdogLoop();
  void GiveThreadsToWaitingWork();
  void CheckRunningStall(int64_t quiet_ms, bool kernels_watched);
  // The running kernels' progress marks combined, or nullopt when the executor cannot tell for one.
  std::optional<uint64_t> RunningProgressMark();
  std::string RunningStalledMessage(int64_t quiet_ms) const;
  void StopForInterrupt();
  std::string RunningStallMessage(const Launch& launch, CoreType type, int64_t quiet_ms) const;
  // The idle stall (runtime_idle_stall.cpp), with mu_ held: nothing runs and nothing can start while
  // tasks are live; the run fails (SchedulerTimeout, S3 or S4) and the stuck tasks are retired unrun.
  bool IdleStalled() const;
  void FailIdleStall();
  std::string IdleStallMessage() const;
  std::string StuckTaskText(const Task& task) const;
  // Cross-core pipes (runtime_cross_core.cpp), with mu_ held.
  pypto::expected<Task*, FatalError> PipeTask(const KernelLaunch& running, std::string_view kernel, const char* op,
                                              bool producer, const PipeRef& pipe);
  pypto::expected<void, FatalError> WaitAtPipe(std::unique_lock<std::mutex>& lock, Task& task, PipeWait wait);
  void CheckPipeStall(const MixedBlock& block);
  pypto::expected<Task*, FatalError> EventTask(const KernelLaunch& running, std::string_view kernel, const char* op);

  // Early resolve (runtime_early_resolve.cpp), with mu_ held.
  void Started(Task& task);
  void ReleaseEarly(Task& producer);
  void Stage(Task& task);
  void StageWaiting(CoreType type);

  void WorkerLoop();
  std::optional<CoreType> NextDispatchable() const;
  size_t DispatchableCount() const;
  // With mu_ held: takes the oldest dispatchable task of `type`, runs it without the lock, retires it.
  void DispatchOne(std::unique_lock<std::mutex>& lock, CoreType type);
  pypto::expected<void, FatalError> RunOnCore(Task& task, int core);
  pypto::expected<void, FatalError> RunObserved(const Task& task, const KernelLaunch& launch);
  pypto::expected<void, FatalError> Execute(const Task& task, const KernelLaunch& launch);
  void Retire(Task& task, int core);
  static void FillOutputs(const Task& task);
  void RecordError(FatalError error);
  // With mu_ held: a slot in the current scope's ring for a launch of func_id, waiting for one to be
  // given back if need be; ScopeDeadlock when none can be.
  pypto::expected<std::shared_ptr<Launch>, FatalError> TakeSlot(std::unique_lock<std::mutex>& lock, int32_t func_id,
                                                                int32_t blocks);
  size_t HeldByOpenScopes(size_t ring) const;
  FatalError FlowControlDeadlock(int32_t func_id, size_t ring, size_t usable) const;
  // With mu_ held: tasks submitted now take only their explicit dependencies (a manual scope is open;
  // nothing nests in one, so it is the innermost).
  bool InManualScope() const { return scopes_.back()->manual; }
  void FinishLaunch(Launch& launch);
  // Heap rings (runtime_heap.cpp), with mu_ held: gives back the blocks whose last user `task` was.
  void ReleaseLeases(Task& task);
  void FreeHeapBlock(const HeapBlock& block);
  pypto::unexpected<FatalError> HeapDeadlock(uint64_t bytes, size_t ring, std::string_view name, bool too_big);
  // Dependency pools (runtime_dep_pool.cpp), with mu_ held. ChargeDepPool counts, before a submit adds
  // its tasks, the producers upstream's runtime would wire it to and charges its ring's pools, or fails
  // with DepPoolOverflow; NoteSubmitted records what the submit, now `id`, writes; EndScopeDeps gives
  // back what an ending scope (at `depth`) holds.
  pypto::expected<void, FatalError> ChargeDepPool(int32_t func_id, const TaskArgs& args);
  void NoteSubmitted(const TaskArgs& args, TaskId id);
  void EndScopeDeps(Scope& scope, size_t depth);
  bool Pinned(TaskId id) const;
  pypto::unexpected<FatalError> DepPoolOverflow(int32_t func_id, size_t producers, bool spill);
  // With mu_ held, once no task is live: the run's outer scope starts afresh.
  void RestartOuterScope();
  // With mu_ held: sleeps until a task retires (under CallerFirst, runs a ready one instead).
  void WaitForProgress(std::unique_lock<std::mutex>& lock);
  // With mu_ held: returns once no task is live. Under CallerFirst the calling thread runs tasks.
  void Drain(std::unique_lock<std::mutex>& lock);
  // CallerFirst, with mu_ held: one more thread for a dispatchable task nobody has taken, if that
  // task is worth a wake-up.
  void WakeHelper();
  bool WorthAHelper() const;
  void StartWorkers();

  const RuntimeOptions options_;
  CoreExecutor& executor_;
  const bool caller_first_;
  int worker_count_ = 0;  // threads to run (all started at once)

  mutable std::mutex mu_;
  // Eager: a task may have become dispatchable, or stopping_ was set. CallerFirst: the same, for
  // workers only. On the heap, so that a forked child can leak its copy (see ForkGuard).
  std::unique_ptr<std::condition_variable> work_cv_ = std::make_unique<std::condition_variable>();
  // Eager: live_ became empty. CallerFirst: live_ became empty, or a waiting thread may dispatch.
  std::condition_variable idle_cv_;
  std::condition_variable barrier_cv_;  // a barrier completed, a pipe moved, or the run failed
  int running_ = 0;          // kernel tasks on cores
  int barrier_waiters_ = 0;  // of those, the ones waiting at a syncall
  int idle_workers_ = 0;    // workers asleep on work_cv_
  int idle_waiters_ = 0;    // CallerFirst: waiting threads asleep on idle_cv_
  bool workers_started_ = false;
  std::unordered_map<int32_t, int64_t> task_ns_;  // CallerFirst: running average kernel time by func_id
  TaskId next_id_ = 0;
  std::unordered_map<TaskId, std::unique_ptr<Task>> live_;  // submitted and not yet retired
  std::vector<std::unique_ptr<Task>> spare_tasks_;  // retired, blank, for reuse (at most kSpareTasks)
  // Unretired tasks' accesses by allocation (dependencies are only ever found within one
  // buffer_addr): who reads and who writes which bytes. Reads and writes are kept apart because a
  // read only ever waits for writes: many tasks reading one tensor cost nothing to each other.
  // Empty views are not recorded: they overlap nothing.
  struct BufferAccesses {
    AccessIndex reads;
    AccessIndex writes;
  };
  std::unordered_map<uint64_t, BufferAccesses> accesses_;
  std::array<std::deque<Task*>, 2> ready_;     // per core type, in the order tasks became ready
  // Early resolve: tasks that could be staged but found no idle core, oldest first, per core type.
  // By id, since a task may start or retire before a core frees; stale ids are skipped.
  std::array<std::deque<TaskId>, 2> stageable_;
  std::array<std::vector<int>, 2> free_cores_;  // per core type; back() is handed out next
  std::optional<FatalError> error_;             // the first fatal error; latched
  size_t completed_ = 0;
  std::vector<std::shared_ptr<Scope>> scopes_;  // open scopes, outermost (the run's) first
  std::array<size_t, kRings> slots_used_{};
  int slot_waiters_ = 0;  // submits waiting for a slot
  // Heap rings: bytes taken, and of those the bytes released by the orchestration and waiting only
  // for their users to retire (what waiting can give back).
  std::array<uint64_t, kRings> heap_used_{};
  std::array<uint64_t, kRings> heap_leased_{};
  int heap_waiters_ = 0;  // HeapAllocate calls waiting for a ring to have room
  // Dependency pools, per ring: the entries (and fanin spill entries) charged by the submits of the
  // ring's oldest open scope and everything after it on that ring, which no reclaim can reach while
  // that scope is open; the writes of submits of open scopes, by allocation; and the producers of the
  // submit being charged (kept for its memory).
  struct DepPoolUse {
    uint64_t entries = 0;
    uint64_t spilled = 0;
  };
  std::array<DepPoolUse, kRings> dep_pool_{};
  std::unordered_map<uint64_t, PinnedWriteIndex> pinned_writes_;
  std::vector<TaskId> dep_producers_;
  bool stopping_ = false;
  // Recording the dependency graph: the node of the submit in progress, the node of every task of the
  // run by id (ids are dense from 0), and the finished tasks, kept until Reset.
  DepGraph* const graph_;
  uint32_t graph_node_ = 0;
  std::vector<uint32_t> graph_node_of_;
  std::vector<std::unique_ptr<Task>> retired_;
  // The watchdog: asleep (on its own condition variable, on the heap for the same reason as work_cv_)
  // while no kernel runs; `progress_` counts kernel starts, retirements and barrier arrivals.
  std::unique_ptr<std::condition_variable> watchdog_cv_ = std::make_unique<std::condition_variable>();
  bool watchdog_started_ = false;
  bool watchdog_asleep_ = false;
  uint64_t progress_ = 0;
  std::vector<std::thread> workers_;  // last: started once everything above exists
  std::thread watchdog_;
};

}  // namespace pypto::rt
