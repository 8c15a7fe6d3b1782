// Task submission, dependency tracking and scheduling. A platform plugin supplies the CoreExecutor
// that actually runs a kernel on a logical core; the runtime decides when and where.
#pragma once

#include <array>
#include <cstdint>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "pypto/runtime/fatal.h"
#include "pypto/runtime/task_args.h"
#include "pypto/support/expected.h"

namespace pypto::rt {

enum class CoreType : uint8_t { AIC = 0, AIV = 1 };
class TaskObserver;  // task_observer.h
class DepGraph;      // dep_graph.h
const char* CoreTypeName(CoreType type);
// "aic" or "aiv": how kernel_config.py, build directories and cache keys spell a core type.
const char* CoreTypeKey(CoreType type);

// Indices into a kernel's args[] that carry the runtime contexts, after tensors and scalars.
inline constexpr int kLocalContextSlot = 48;
inline constexpr int kGlobalContextSlot = 49;
inline constexpr int kArgSlots = 50;

struct LocalContext {
  int32_t block_idx = 0;
  int32_t block_num = 1;
};
struct GlobalContext {
  int32_t sub_block_id = 0;
};

struct KernelLaunch;

// A cross-core pipe of one block of a mixed task: its id and direction, and the slots of its ring
// (set by the first member that uses it).
enum class PipeDirection : uint8_t { AicToAiv = 0, AivToAic = 1 };
const char* PipeDirectionName(PipeDirection direction);  // "AIC to AIV"

// How the AIV lanes of a block share the tiles of a pipe (upstream's split codes). Whole: each tile
// goes whole to the AIV kernel (the lanes of one running on both share the pipe's tiles in order).
// UpDown / LeftRight, for a block that runs its AIV kernel on both lanes: the cube side's tile is cut
// in two along its rows / columns, lane 0 taking the first half and lane 1 the second; each lane's
// tile is the half box (the cut extent halved, rounded up, so lane 1 of an odd extent gets one row
// or column less and the rest of its box reads zero). AIC to AIV, both lanes pop each tile pushed
// and the slot is free once both have freed it; AIV to AIC, both lanes push their half and the cube
// pops the tile once both are in. A pipe is used split or whole throughout.
enum class PipeSplit : uint8_t { Whole = 0, UpDown = 1, LeftRight = 2 };
const char* PipeSplitName(PipeSplit split);  // "up-down"

struct PipeRef {
  int32_t id = 0;
  PipeDirection direction = PipeDirection::AicToAiv;
  int32_t slots = 2;
  PipeSplit split = PipeSplit::Whole;
  // The tile this op pushes or pops, as a row-major matrix: a split pipe cuts tiles by it.
  int64_t rows = 1, cols = 1;
};

// A cross-core event of one block of a mixed task (pl.system.sync_set / sync_wait): its flag id and
// the FFTS mode a set is raised with. Each member counts the raises delivered to it per id, and a
// wait consumes one. Mode 2 (AIC and AIV of a block): a raise by the AIC reaches every AIV lane; the
// AIC receives one once every AIV lane has raised. Mode 1 (the AIV lanes of a block): every lane
// receives one once every lane has raised. Mode 0 spans every core of a type in the launch.
inline constexpr int32_t kEventIds = 16;
inline constexpr int64_t kMaxPendingEvents = 15;  // what a flag's counter holds on the device
struct EventRef {
  int32_t id = 0;
  int32_t mode = 2;
};

// What a running kernel can wait for: every block of its SPMD launch reaching the same barrier (an
// in-kernel syncall), or the peer member of its mixed task at a cross-core pipe. The runtime
// implements both, because only the scheduler knows whether the blocks or members waited for can
// still arrive. `kernel` names the running kernel in a diagnosis; a wait that can never end is a
// fatal error instead of a hang.
class LaunchBarrier {
 public:
  // Returns once every block of `launch`'s task (every member of every block, for a mixed task) has
  // called SyncAll as often as this one. `call` ("file:line: SyncAll<false>()"), when the caller
  // knows it, locates the kernel's call in a diagnosis.
  virtual pypto::expected<void, FatalError> SyncAll(const KernelLaunch& launch, std::string_view kernel,
                                                    std::string_view call) = 0;
  pypto::expected<void, FatalError> SyncAll(const KernelLaunch& launch, std::string_view kernel) {
    return SyncAll(launch, kernel, {});
  }

  // The pipes between the members of one block of a mixed task (KernelLaunch::mixed_group). PipePush
  // copies `tile` into a free slot, waiting while every slot is taken; PipePop copies the oldest
  // tile pushed and not yet popped into `tile` (of the same size), waiting while there is none;
  // PipeFree gives the slot of the oldest popped tile back to the producer.
  virtual pypto::expected<void, FatalError> PipePush(const KernelLaunch& launch, std::string_view kernel,
                                                     const PipeRef& pipe, std::span<const std::byte> tile) = 0;
  virtual pypto::expected<void, FatalError> PipePop(const KernelLaunch& launch, std::string_view kernel,
                                                    const PipeRef& pipe, std::span<std::byte> tile) = 0;
  virtual pypto::expected<void, FatalError> PipeFree(const KernelLaunch& launch, std::string_view kernel,
                                                     const PipeRef& pipe) = 0;

  // The cross-core events between the members of one block of a mixed task (EventRef). EventSet
  // raises `event`; EventWait waits until a raise of `event.id` is pending for this member and
  // consumes it.
  virtual pypto::expected<void, FatalError> EventSet(const KernelLaunch& launch, std::string_view kernel,
                                                     const EventRef& event) = 0;
  virtual pypto::expected<void, FatalError> EventWait(const KernelLaunch& launch, std::string_view kernel,
                                                      const EventRef& event) = 0;

 protected:
  ~LaunchBarrier() = default;
};

// One kernel invocation, as handed to the platform.
struct KernelLaunch {
  TaskId task_id = kInvalidTaskId;
  // The members of one block of a mixed submit share this id (the first member's task id); else
  // kInvalidTaskId.
  TaskId mixed_group = kInvalidTaskId;
  // The blocks of one AIC or AIV launch share this id (its first block's task id); else kInvalidTaskId.
  TaskId launch_id = kInvalidTaskId;
  int32_t func_id = -1;
  CoreType core_type = CoreType::AIV;
  int core_index = 0;  // the logical core, numbered within its core type
  int64_t* args = nullptr;  // the kernel's args[]: tensor descriptor pointers, scalars, contexts
  LaunchBarrier* barrier = nullptr;  // set by the runtime for the duration of Execute
};

class CoreExecutor {
 public:
  virtual ~CoreExecutor() = default;
  // Called from scheduler threads, concurrently for distinct cores. An error is fatal for the run.
  virtual pypto::expected<void, FatalError> Execute(const KernelLaunch& launch) = 0;
  // Asks the kernel that `launch` runs (an Execute in progress on another thread) to give up and
  // return: the run has failed (SchedulerTimeout) and the kernel makes no progress, so it would
  // otherwise never return. It may have returned already. The default cannot stop a kernel.
  virtual void Abort(const KernelLaunch& launch) { (void)launch; }
  // The kernel's name for a diagnosis, or empty when unknown.
  virtual std::string KernelName(int32_t func_id) const {
    (void)func_id;
    return {};
  }
  // For the stall watchdog, from its thread while the kernel of `launch` runs: a value that changes
  // when the kernel makes progress (a digest of what it can write: its tensors, its core's buffers).
  // Two equal marks a scheduler timeout apart, with no task started or finished meanwhile, mean the
  // kernel waits for something that nothing will do (upstream's S1 running-stalled). Nullopt (the
  // default) when the executor cannot tell: such a kernel is never declared stalled on its own.
  virtual std::optional<uint64_t> ProgressMark(const KernelLaunch& launch) {
    (void)launch;
    return std::nullopt;
  }
};

// Who runs ready tasks.
//  Eager:       worker threads, started with the Runtime, run every task as soon as it is ready and
//               has a free core; the thread in WaitAll only waits.
//  CallerFirst: the thread in WaitAll (or Reset, or the destructor) runs ready tasks itself. Worker
//               threads are started the first time there is more ready work than running threads,
//               are then kept for the life of the Runtime, and are woken only for that surplus. A
//               chain of dependent tasks therefore runs entirely on the calling thread, with no
//               thread start, wake-up or hand-off; independent tasks still spread over the workers,
//               when they are long enough to be worth a wake-up (see helper_min_task_ns). A task
//               may not start before some thread waits for it.
enum class Dispatch : uint8_t { Eager, CallerFirst };

// Upstream's SIMPLER_SCHEDULER_TIMEOUT_MS default, onboard and on its simulator.
inline constexpr int64_t kDefaultSchedulerTimeoutMs = 10'000;

// Task rings and heap rings: one per scope depth, depths 3 and deeper sharing the last.
inline constexpr size_t kScopeRings = 4;
inline constexpr uint64_t kDefaultRingHeap = uint64_t{256} << 20;  // upstream's default: 256 MiB a ring
inline constexpr uint32_t kDefaultRingDepPool = 16384;  // upstream's PTO2_DEP_LIST_POOL_SIZE: entries a ring
inline constexpr uint32_t kFaninInlineCap = 64;          // upstream's PTO2_FANIN_INLINE_CAP: edges a task holds

// Memory a run took from a heap ring (Runtime::HeapAllocate): 64-byte aligned, `bytes` of it charged
// to ring `ring` (the size asked, rounded up to 1 KiB as upstream carves its slices).
struct HeapBlock {
  void* memory = nullptr;
  size_t ring = 0;
  uint64_t bytes = 0;
};

struct RuntimeOptions {
  int aic_cores = 24;
  int aiv_cores = 48;
  // Threads that run kernels: 0 means one per hardware thread; never more than one per core. Under
  // CallerFirst the waiting thread counts as one of them (1: every task runs on the caller).
  int worker_threads = 0;
  Dispatch dispatch = Dispatch::Eager;
  // CallerFirst: another thread is woken for a ready task only if tasks of its func_id have run
  // this long on average (or have not run yet): a shorter task is done sooner by a thread that is
  // already awake than by one that must be woken. Averages are kept across Reset. 0: always wake.
  int64_t helper_min_task_ns = 20'000;
  // Slots of each task ring, as upstream's ring_task_window: there is one ring per scope depth (the
  // run's outer scope is depth 0; depths 3 and deeper share the last ring), and a launch (all blocks
  // of one submit) holds a slot of its scope's ring from submit until it has finished and its scope
  // has ended. At most task_window - 1 slots are in use; a submit waits for one to be given back.
  // When every used slot belongs to a scope still open, none can come back: ScopeDeadlock.
  int task_window = 16384;
  // Bytes of each heap ring, as upstream's ring_heap: the memory a run's tensors are carved from (the
  // intermediates of a plan), one ring per scope depth like the task rings. See HeapAllocate.
  std::array<uint64_t, kScopeRings> ring_heap = {kDefaultRingHeap, kDefaultRingHeap, kDefaultRingHeap,
                                                 kDefaultRingHeap};
  // Entries of each ring's dependency pools, as upstream's ring_dep_pool: a submit takes one entry of
  // its scope's ring per producer task it waits for, and one of the ring's fanin spill pool per
  // producer beyond the kFaninInlineCap it holds inline; they come back once its scope has ended. A
  // submit that needs more than the tasks of the scopes still open leave is DepPoolOverflow.
  // See runtime_dep_pool.cpp.
  std::array<uint32_t, kScopeRings> ring_dep_pool = {kDefaultRingDepPool, kDefaultRingDepPool, kDefaultRingDepPool,
                                                     kDefaultRingDepPool};
  // Debugging outputs (args dump, swimlane): told about every kernel task before and after it runs.
  // Null (the default) costs nothing. Not owned; must outlive the Runtime.
  TaskObserver* observer = nullptr;
  // The dependency graph (RunConfig(enable_dep_gen)): every submit and the edges the runtime gives it.
  // While set, finished tasks keep their accesses until Reset, so that edges to them are recorded
  // too. Null (the default) costs nothing. Not owned; must outlive the Runtime.
  DepGraph* dep_graph = nullptr;
  // Upstream's stall watchdog (SIMPLER_SCHEDULER_TIMEOUT_MS, default 10 s): when every core of a type is
  // held by blocks of one launch, more of its blocks wait for a core, and nothing has started or
  // finished for this long, those blocks wait for each other (a barrier without sync_start) and the
  // run fails with SchedulerTimeout. A kernel that is merely slow, with no block of its launch waiting
  // for a core, is never declared stalled. See SchedulerTimeoutMs (task_plan.h).
  int64_t scheduler_timeout_ms = kDefaultSchedulerTimeoutMs;
};

// One MixedKernels submit (upstream's {aic, aiv0, aiv1}): the members run together on one block's
// cores, sharing one args[] payload, and count as one task for dependencies: every member waits for
// what any member's arguments wait for, and later tasks wait for all members. A block's members are
// dispatched together, once each holds a core, so that they can talk through cross-core pipes. kNoKernel leaves a
// lane empty; aiv1 == aiv launches the AIV kernel on both lanes (dual AIV dispatch), each seeing its
// lane as sub_block_id.
inline constexpr int32_t kNoKernel = -1;
struct MixedKernels {
  int32_t aic = kNoKernel;
  int32_t aiv0 = kNoKernel;
  int32_t aiv1 = kNoKernel;
};

// How a scope's tasks get their dependencies (upstream's PTO2ScopeMode). Auto: from overlapping
// tensor views, plus the explicit ones. Manual: from their explicit dependencies only. A task submitted
// in a manual scope neither looks up the accesses of earlier tasks (inside the scope or before it) nor
// registers its own, so tasks after the scope do not wait for it either unless they name it (as
// upstream: every edge touching a manual task is one the orchestration wrote). Nothing nests in a
// manual scope: opening any scope inside one is fatal (InvalidArgs).
enum class ScopeMode : uint8_t { Auto, Manual };

class Runtime {
 public:
  Runtime(RuntimeOptions options, CoreExecutor& executor);
  ~Runtime();  // waits for (under CallerFirst: runs) the submitted tasks
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Dependencies come from overlapping tensor views: read-after-write, write-after-read and
  // write-after-write; and from TaskArgs::set_dependencies (in a manual scope, only from those). The id a submit returns stands for all
  // of it: for a launch of several blocks or a mixed task it is a dummy task that waits for every
  // block and member. A launch with launch_spec.require_sync_start runs its blocks together: they
  // wait for their arguments as one, are dispatched only when all of them have a core, and do not wait
  // for each other; more blocks than cores of their type is RequireSyncStartInvalid.
  pypto::expected<TaskId, FatalError> SubmitAic(int32_t func_id, const TaskArgs& args);
  pypto::expected<TaskId, FatalError> SubmitAiv(int32_t func_id, const TaskArgs& args);
  pypto::expected<TaskId, FatalError> Submit(CoreType core, int32_t func_id, const TaskArgs& args);
  pypto::expected<TaskId, FatalError> SubmitMixed(const MixedKernels& kernels, const TaskArgs& args);
  // A dependency-only task (upstream's dummy task): it waits like any task for its arguments and
  // explicit dependencies, runs nothing, and later tasks can wait for it.
  pypto::expected<TaskId, FatalError> SubmitDummy(const TaskArgs& args);
  // A fill task: a dependency-only task that, once its arguments are ready, sets every element of its
  // output tensors (contiguous ones) to the low bytes of `bits`, then completes. As a writer of them it
  // waits for the tasks still using them, and later users wait for it: a buffer reused by each
  // iteration of a loop starts every iteration at its value (pl.create_tensor(..., init_value=v)).
  pypto::expected<TaskId, FatalError> SubmitFill(const TaskArgs& args, uint64_t bits);

  // Opens a scope inside the current one; ScopeEnd closes the innermost scope ScopeBegin opened (the
  // run's outer scope ends in WaitAll). Finished tasks of a scope give back their slots when it ends.
  // A scope opened inside a manual one is refused with InvalidArgs, latched as the run's error.
  pypto::expected<void, FatalError> ScopeBegin(ScopeMode mode = ScopeMode::Auto);
  void ScopeEnd();

  // Blocks until every submitted task has finished, which ends the run's outer scope; returns the
  // first fatal error, if any.
  pypto::expected<void, FatalError> WaitAll();

  // Waits for every submitted task, then starts a new run on the same threads and cores: task ids
  // count from 0 again, the completed count is 0 and a latched fatal error is forgotten. This is
  // what lets one Runtime serve many runs of a plan without starting threads for each.
  void Reset();

  size_t tasks_completed() const;

  // The heap rings (upstream's HeapRing, one per scope depth): memory for the tensors a run creates.
  // HeapAllocate takes `bytes` (zero-filled) from ring `ring`; while the ring is full it waits for blocks
  // to be given back (dispatching, under CallerFirst). When none can come back, because every block
  // still charged is one the orchestration has not released yet, the run fails with HeapRingDeadlock,
  // as it does at once for a block larger than the whole ring; `name` says whose memory it is.
  pypto::expected<HeapBlock, FatalError> HeapAllocate(uint64_t bytes, size_t ring, std::string_view name);
  // Gives `block` back to its ring once every task of `users` has finished (at once if none is live):
  // the orchestration calls it when no later task can use the memory, e.g. when the tensor's scope ends.
  void HeapRelease(HeapBlock block, std::span<const TaskId> users);
  // Bytes of ring `ring` taken and not yet given back.
  uint64_t heap_used(size_t ring) const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pypto::rt
