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
// producers. See the section "Early resolve" below.
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
#include "pypto/runtime/runtime.h"

#include "pypto/runtime/dep_graph.h"
#include "pypto/runtime/task_observer.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <latch>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include <pthread.h>

#include "mixed_block.h"
#include "range_index.h"

namespace pypto::rt {

const char* CoreTypeName(CoreType type) { return type == CoreType::AIC ? "AIC" : "AIV"; }
const char* CoreTypeKey(CoreType type) { return type == CoreType::AIC ? "aic" : "aiv"; }

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace {

// Reads see earlier writes (RAW); writes are ordered after earlier writes (WAW).
bool Writes(ArgDirection direction) {
  return direction == ArgDirection::Output || direction == ArgDirection::OutputExisting ||
         direction == ArgDirection::InOut;
}

// A scope's share of its ring: launches submitted in it, and how many of those have finished.
// `manual`: its tasks get no dependencies from tensors (ScopeMode::Manual).
struct Scope {
  size_t ring = 0;
  size_t launches = 0;
  size_t finished = 0;
  bool ended = false;
  bool manual = false;
};

struct Task;

// One submit: its blocks, and the scope whose ring slot it holds.
struct Launch {
  std::shared_ptr<Scope> scope;
  int32_t blocks_left = 0;
  int32_t started = 0;  // its blocks dispatched so far (counted for early resolve only)
  // The kernel tasks of an AIC/AIV launch by block index while they are live (null once retired),
  // for its syncall barrier; empty for a mixed launch. `submitted`: every block is in `blocks`.
  std::vector<Task*> blocks;
  bool submitted = false;
  int32_t func_id = -1;
  TaskId first_task = kInvalidTaskId;
  // The barrier: blocks arrived at the current one, and how many have completed.
  int32_t arrived = 0;
  uint64_t generation = 0;
  std::string kernel;  // the name the blocks gave when waiting, for a diagnosis
};

// The tasks of a sync_start launch, or the members of one block of a mixed task: queued as one (its
// first task stands in the ready queue) once all are ready, and dispatched only onto enough free cores
// for all of them at once.
struct Cohort {
  size_t size = 0;             // its tasks, all of them known at submit
  std::vector<Task*> tasks;    // in submit order; the first stands in the ready queue
  std::array<int, 2> cores{};  // cores needed per core type
  size_t ready = 0;
};

inline constexpr size_t kRings = 4;

// An entry of the runtime's access index: task->accesses[slot] is the access it records.
struct AccessRef {
  Task* task;
  uint32_t slot;
};
using AccessIndex = RangeIndex<AccessRef>;

struct Task {
  TaskId id = kInvalidTaskId;
  int32_t func_id = -1;
  CoreType core_type = CoreType::AIV;
  // The descriptors the kernel sees; sized once at submit, so args[] may point into it.
  std::vector<ChipTensor> tensors;
  LocalContext local;
  GlobalContext global;
  std::array<int64_t, kArgSlots> args{};

  struct Access {
    uint64_t buffer_addr;
    bool write;
    bool live;  // still in the index: false once a later write covering it has taken its place
    uint16_t arg;  // the tensor argument it comes from (for the dependency graph)
    AccessIndex::Handle entry;
  };
  std::vector<Access> accesses;  // registered with the runtime until this task retires
  std::vector<Task*> dependents;  // tasks waiting for this one
  size_t pending = 0;             // unfinished tasks this one waits for
  // Early resolve. `early_resolve`: its dependents may be staged before it finishes. `released_early`:
  // it allows that, and it and every block of its launch have started. `holding_back`: of the
  // `pending` producers, those not released early; a task with none left can be staged. `staged`:
  // `core` is reserved for it while it waits for its producers.
  bool early_resolve = false;
  bool released_early = false;
  size_t holding_back = 0;
  bool staged = false;
  int64_t staged_ns = 0;
  TaskId last_dependent = kInvalidTaskId;  // the newest task given an edge from this one
  std::shared_ptr<Launch> launch;
  // A dependency-only node (the gate and join of a mixed submit): retired as soon as it is ready,
  // on no core.
  bool dummy = false;
  // Recording the dependency graph: the node of the submit it belongs to, and whether it has finished
  // (it is kept, accesses and all, so that later submits still find it; see RuntimeOptions::dep_graph).
  uint32_t graph_node = 0;
  bool retired = false;
  int8_t lane = -1;  // an AIV lane fixed by a mixed submit; else the core's parity
  int core = -1;     // the core it runs on, while it does
  bool at_barrier = false;  // its kernel waits in LaunchBarrier::SyncAll
  std::shared_ptr<Cohort> cohort;  // a block of a sync_start launch, or a member of a mixed task
  TaskId mixed_group = kInvalidTaskId;  // KernelLaunch::mixed_group
  std::shared_ptr<MixedBlock> mixed_block;  // a member of a mixed task's block: its pipes and peers
  size_t member = 0;                        // its index among them
  // Only with an observer: the arguments as submitted (directions and dump marks), for ObservedTask.
  std::vector<TensorArg> observed_args;
  size_t scalar_count = 0;
};

// Copies the arguments into `task` (a blank one: new, or recycled by the runtime) and lays out
// args[]: descriptor pointers, scalar bit patterns, then the two contexts at their fixed slots.
// `observed`: an observer will look at the task, so it keeps the arguments as submitted too.
std::unique_ptr<Task> MakeTask(std::unique_ptr<Task> task, CoreType core, int32_t func_id, const TaskArgs& args,
                               int32_t block_idx, bool observed) {
  if (observed) task->observed_args = args.tensors();
  task->scalar_count = args.scalars().size();
  task->func_id = func_id;
  task->core_type = core;
  task->early_resolve = args.allow_early_resolve();
  task->local = LocalContext{.block_idx = block_idx, .block_num = args.launch_spec.block_num};
  task->tensors.reserve(args.tensors().size());
  for (const TensorArg& arg : args.tensors()) task->tensors.push_back(arg.tensor);

  size_t slot = 0;
  for (ChipTensor& tensor : task->tensors) task->args[slot++] = reinterpret_cast<int64_t>(&tensor);
  for (uint64_t bits : args.scalars()) task->args[slot++] = static_cast<int64_t>(bits);
  task->args[kLocalContextSlot] = reinterpret_cast<int64_t>(&task->local);
  task->args[kGlobalContextSlot] = reinterpret_cast<int64_t>(&task->global);
  return task;
}

static_assert(TaskArgs::kMaxTensors + TaskArgs::kMaxScalars <= kLocalContextSlot,
              "tensors and scalars must fit below the context slots");

// Retired tasks a runtime keeps for reuse: a submit then allocates neither the task nor, up to the
// sizes they had before, its vectors. A few MB at most (a task is about 600 bytes, plus 128 per tensor).
inline constexpr size_t kSpareTasks = 4096;

// fork() and long-lived workers: a child gets a copy of every mutex and condition variable but none
// of the threads. A mutex may be copied locked by a worker, and a condition variable counts workers
// waiting on it that do not exist in the child (destroying or signalling it may then wait forever).
// So every CallerFirst runtime (whose workers outlive a run) takes part in fork: its scheduling mutex
// is held across it, and in the child it forgets its workers and their condition variable; the
// child runs its tasks on the waiting thread and starts workers of its own when it needs them.
class ForkAware {
 public:
  virtual void BeforeFork() = 0;
  virtual void AfterForkInParent() = 0;
  virtual void AfterForkInChild() = 0;

 protected:
  ~ForkAware() = default;
};

class ForkGuard {
 public:
  static ForkGuard& Get() {
    static ForkGuard* guard = [] {
      auto* created = new ForkGuard();  // never destroyed: fork may come during static destruction
      pthread_atfork([] { Get().Prepare(); }, [] { Get().Release(false); }, [] { Get().Release(true); });
      return created;
    }();
    return *guard;
  }
  // Never called with a runtime's mutex held: the order is the guard's mutex, then the runtimes'.
  void Add(ForkAware* runtime) {
    std::lock_guard hold(mu_);
    runtimes_.push_back(runtime);
  }
  void Remove(ForkAware* runtime) {
    std::lock_guard hold(mu_);
    std::erase(runtimes_, runtime);
  }

 private:
  void Prepare() {
    mu_.lock();
    for (ForkAware* runtime : runtimes_) runtime->BeforeFork();
  }
  void Release(bool child) {
    for (ForkAware* runtime : runtimes_) child ? runtime->AfterForkInChild() : runtime->AfterForkInParent();
    mu_.unlock();
  }

  std::mutex mu_;
  std::vector<ForkAware*> runtimes_;
};

}  // namespace

class Runtime::Impl final : public LaunchBarrier, private ForkAware {
 public:
  Impl(RuntimeOptions options, CoreExecutor& executor);
  ~Impl();

  pypto::expected<TaskId, FatalError> Submit(CoreType core, int32_t func_id, const TaskArgs& args);
  pypto::expected<TaskId, FatalError> SubmitGraphed(CoreType core, int32_t func_id, const TaskArgs& args);
  pypto::expected<TaskId, FatalError> SubmitMixedGraphed(const MixedKernels& kernels, const TaskArgs& args);
  pypto::expected<TaskId, FatalError> SubmitDummyGraphed(const TaskArgs& args);
  pypto::expected<TaskId, FatalError> SubmitBlock(CoreType core, int32_t func_id, const TaskArgs& args,
                                                  const std::shared_ptr<Launch>& launch, int32_t block_idx);
  pypto::expected<TaskId, FatalError> SubmitMixed(const MixedKernels& kernels, const TaskArgs& args);
  pypto::expected<TaskId, FatalError> SubmitDummy(const TaskArgs& args);
  pypto::expected<void, FatalError> SyncAll(const KernelLaunch& launch, std::string_view kernel) override;
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
  TaskId JoinOf(const std::vector<TaskId>& ids);
  pypto::expected<void, FatalError> ScopeBegin(ScopeMode mode);
  void ScopeEnd();
  pypto::expected<void, FatalError> WaitAll();
  void Reset();
  size_t tasks_completed() const;

 private:
  static size_t Index(CoreType type) { return static_cast<size_t>(type); }
  int CoreCount(CoreType type) const { return type == CoreType::AIC ? options_.aic_cores : options_.aiv_cores; }

  void BeforeFork() override { mu_.lock(); }
  void AfterForkInParent() override { mu_.unlock(); }
  void AfterForkInChild() override;

  // With mu_ held: checks a task's arguments and core type; a refusal is latched as the run's error.
  pypto::expected<void, FatalError> CheckSubmit(CoreType core, int32_t func_id, const TaskArgs& args);
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

  // sync_start launches (the section "Co-started launches" below).
  pypto::expected<void, FatalError> CheckSyncStart(CoreType core, int32_t func_id, int32_t blocks);
  pypto::expected<TaskId, FatalError> SubmitCohort(CoreType core, int32_t func_id, const TaskArgs& args);
  Task* AddGate(const TaskArgs& args);
  bool CohortFits(const Task& leader) const;
  void DispatchCohort(std::unique_lock<std::mutex>& lock, Task& leader);
  // syncall barriers: a thread for work nobody can take while threads wait at barriers, and the
  // check that fails the run when no barrier can ever complete.
  void ProvideThread();
  void CheckBarrierStall();
  std::string BarrierStallMessage(const Launch& launch) const;
  // Cross-core pipes (the section "Cross-core pipes" below), with mu_ held.
  pypto::expected<Task*, FatalError> PipeTask(const KernelLaunch& running, std::string_view kernel, const char* op,
                                              bool producer, const PipeRef& pipe);
  pypto::expected<void, FatalError> WaitAtPipe(std::unique_lock<std::mutex>& lock, Task& task, PipeWait wait);
  void CheckPipeStall(const MixedBlock& block);
  pypto::expected<Task*, FatalError> EventTask(const KernelLaunch& running, std::string_view kernel, const char* op);

  // Early resolve (the section "Early resolve" below), with mu_ held.
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
  void RecordError(FatalError error);
  // With mu_ held: a slot in the current scope's ring for a launch of func_id, waiting for one to be
  // given back if need be; ScopeDeadlock when none can be.
  pypto::expected<std::shared_ptr<Launch>, FatalError> TakeSlot(std::unique_lock<std::mutex>& lock, int32_t func_id,
                                                                int32_t blocks);
  size_t HeldByOpenScopes(size_t ring) const;
  // With mu_ held: tasks submitted now take only their explicit dependencies (a manual scope is open;
  // nothing nests in one, so it is the innermost).
  bool InManualScope() const { return scopes_.back()->manual; }
  void FinishLaunch(Launch& launch);
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
  bool stopping_ = false;
  // Recording the dependency graph: the node of the submit in progress, the node of every task of the
  // run by id (ids are dense from 0), and the finished tasks, kept until Reset.
  DepGraph* const graph_;
  uint32_t graph_node_ = 0;
  std::vector<uint32_t> graph_node_of_;
  std::vector<std::unique_ptr<Task>> retired_;
  std::vector<std::thread> workers_;  // last: started once everything above exists
};

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
  for (std::thread& worker : workers_) worker.join();
}

// In the child of a fork, single-threaded, with mu_ held since BeforeFork.
void Runtime::Impl::AfterForkInChild() {
  for (std::thread& worker : workers_) worker.detach();  // they do not exist here
  workers_.clear();
  workers_started_ = false;
  idle_workers_ = 0;
  idle_waiters_ = 0;
  (void)work_cv_.release();  // its waiters do not exist either: never signal or destroy it
  work_cv_ = std::make_unique<std::condition_variable>();
  mu_.unlock();
}

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

void Runtime::Impl::Drain(std::unique_lock<std::mutex>& lock) {
  if (!caller_first_) {
    idle_cv_.wait(lock, [&] { return live_.empty(); });
    return;
  }
  while (!live_.empty()) {
    if (std::optional<CoreType> type = NextDispatchable()) {
      DispatchOne(lock, *type);
      continue;
    }
    // Everything left is running elsewhere or waiting for what is: sleep until that changes.
    ++idle_waiters_;
    idle_cv_.wait(lock);
    --idle_waiters_;
  }
}

// An SPMD launch of N blocks is N tasks, one per block index; they depend on each other only through
// the tensors they share, as any tasks do. The id returned is the last block's.
pypto::expected<TaskId, FatalError> Runtime::Impl::Submit(CoreType core, int32_t func_id, const TaskArgs& args) {
  const int32_t blocks = args.launch_spec.block_num;
  if (blocks < 1) {
    std::lock_guard lock(mu_);
    if (!error_)
      RecordError({FatalCode::InvalidArgs, fmt::format("task for func_id {} launches {} blocks", func_id, blocks)});
    return pypto::unexpected(*error_);
  }
  if (args.launch_spec.require_sync_start) return SubmitCohort(core, func_id, args);
  std::shared_ptr<Launch> launch;
  {
    std::unique_lock lock(mu_);
    auto slot = TakeSlot(lock, func_id, blocks);
    if (!slot) return pypto::unexpected(slot.error());
    launch = std::move(*slot);
    launch->blocks.resize(static_cast<size_t>(blocks));
    launch->func_id = func_id;
    launch->first_task = next_id_;
  }
  if (blocks == 1) {
    auto id = SubmitBlock(core, func_id, args, launch, 0);
    std::lock_guard lock(mu_);
    launch->submitted = true;
    return id;
  }
  std::vector<TaskId> ids;
  for (int32_t block = 0; block < blocks; ++block) {
    auto id = SubmitBlock(core, func_id, args, launch, block);
    if (!id) return id;
    ids.push_back(*id);
  }
  std::lock_guard lock(mu_);
  // Its blocks may be waiting at a barrier already: whether it can complete is decided now.
  launch->submitted = true;
  if (barrier_waiters_ > 0) CheckBarrierStall();
  return JoinOf(ids);
}

// With mu_ held: one id for several tasks, a dummy that waits for those still live (the last id when
// none is).
TaskId Runtime::Impl::JoinOf(const std::vector<TaskId>& ids) {
  auto join = BlankTask();
  join->dummy = true;
  join->id = next_id_;
  for (TaskId id : ids)
    if (auto it = live_.find(id); it != live_.end()) AddEdge(*it->second, *join);
  if (join->pending == 0) return ids.back();
  return AddTask(std::move(join)).id;
}

pypto::expected<TaskId, FatalError> Runtime::Impl::SubmitDummy(const TaskArgs& args) {
  std::unique_lock lock(mu_);
  if (args.has_error()) {
    if (!error_)
      RecordError({FatalCode::InvalidArgs, fmt::format("dummy task has invalid arguments: {}", args.error())});
    return pypto::unexpected(*error_);
  }
  auto launch = TakeSlot(lock, -1, 1);
  if (!launch) return pypto::unexpected(launch.error());
  auto task = BlankTask();
  task->dummy = true;
  task->launch = *launch;
  task->id = next_id_;
  AddDependencies(*task, args);
  RegisterAccesses(*task, args);
  return AddTask(std::move(task)).id;
}

pypto::expected<std::shared_ptr<Launch>, FatalError> Runtime::Impl::TakeSlot(std::unique_lock<std::mutex>& lock,
                                                                             int32_t func_id, int32_t blocks) {
  const std::shared_ptr<Scope>& scope = scopes_.back();
  const size_t ring = scope->ring;
  const size_t usable = static_cast<size_t>(std::max(options_.task_window, 2)) - 1;
  while (!error_ && slots_used_[ring] >= usable) {
    if (HeldByOpenScopes(ring) >= slots_used_[ring]) {
      RecordError({FatalCode::ScopeDeadlock,
                   fmt::format("task {} (func_id {}) needs a slot of task ring {}, but all {} usable slots (task "
                               "window {}) are held by tasks of scopes still open, which give them back only when "
                               "those scopes end: the scope at depth {} submits more tasks than its window holds; "
                               "raise the window (RunConfig(ring_task_window=...), PTO2_RING_TASK_WINDOW) or "
                               "split the work into smaller scopes (e.g. a loop, whose body is a scope)",
                               next_id_, func_id, ring, usable, options_.task_window, scopes_.size() - 1)});
      break;
    }
    ++slot_waiters_;
    WaitForProgress(lock);
    --slot_waiters_;
  }
  if (error_) return pypto::unexpected(*error_);
  ++slots_used_[ring];
  ++scope->launches;
  return std::make_shared<Launch>(Launch{.scope = scope, .blocks_left = blocks});
}

size_t Runtime::Impl::HeldByOpenScopes(size_t ring) const {
  size_t held = 0;
  for (const auto& scope : scopes_)
    if (scope->ring == ring) held += scope->launches;
  return held;
}

// With mu_ held, when the last block of a launch retires.
void Runtime::Impl::FinishLaunch(Launch& launch) {
  Scope& scope = *launch.scope;
  if (!scope.ended) {
    ++scope.finished;
    return;
  }
  --slots_used_[scope.ring];
  if (slot_waiters_ > 0) idle_cv_.notify_all();
}

// A refused scope is still pushed (as the manual scope it is in), so that the ScopeEnd matching it
// closes it and not the scope around it; the run has failed anyway.
pypto::expected<void, FatalError> Runtime::Impl::ScopeBegin(ScopeMode mode) {
  std::lock_guard lock(mu_);
  const bool in_manual = InManualScope();
  const bool manual = in_manual || mode == ScopeMode::Manual;
  scopes_.push_back(std::make_shared<Scope>(Scope{.ring = std::min(scopes_.size(), kRings - 1), .manual = manual}));
  if (!in_manual) return {};
  RecordError({FatalCode::InvalidArgs,
               fmt::format("{} scope opened at depth {} inside a manual scope: nothing nests in a manual scope "
                           "(its tasks take only the dependencies they name); close the manual scope first, or "
                           "make the outer scope an auto one",
                           mode == ScopeMode::Manual ? "a manual" : "an auto", scopes_.size() - 1)});
  return pypto::unexpected(*error_);
}

void Runtime::Impl::ScopeEnd() {
  std::lock_guard lock(mu_);
  if (scopes_.size() <= 1) return;  // the run's outer scope ends in WaitAll
  Scope& scope = *scopes_.back();
  scope.ended = true;
  slots_used_[scope.ring] -= scope.finished;
  scopes_.pop_back();
}

void Runtime::Impl::RestartOuterScope() {
  scopes_.assign(1, std::make_shared<Scope>());
  slots_used_.fill(0);
  for (auto& waiting : stageable_) waiting.clear();  // no task is live: every id there is stale
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

pypto::expected<TaskId, FatalError> Runtime::Impl::SubmitBlock(CoreType core, int32_t func_id, const TaskArgs& args,
                                                               const std::shared_ptr<Launch>& launch,
                                                               int32_t block_idx) {
  std::lock_guard lock(mu_);
  if (auto ok = CheckSubmit(core, func_id, args); !ok) return pypto::unexpected(ok.error());
  std::unique_ptr<Task> task = MakeTask(BlankTask(), core, func_id, args, block_idx, options_.observer != nullptr);
  task->launch = launch;
  task->id = next_id_;
  launch->blocks[static_cast<size_t>(block_idx)] = task.get();
  AddDependencies(*task, args);
  RegisterAccesses(*task, args);
  spdlog::debug("task {}: submitted func_id {} ({}), {} tensors, {} scalars, waits for {} tasks", task->id,
                func_id, CoreTypeName(core), args.tensors().size(), args.scalars().size(), task->pending);
  return AddTask(std::move(task)).id;
}

pypto::expected<void, FatalError> Runtime::Impl::CheckSubmit(CoreType core, int32_t func_id, const TaskArgs& args) {
  if (error_) return pypto::unexpected(*error_);
  if (args.has_error()) {
    // As on the device, a malformed task is fatal for the whole run, not only refused.
    RecordError({FatalCode::InvalidArgs,
                 fmt::format("task for func_id {} has invalid arguments: {}", func_id, args.error())});
  } else if (core != CoreType::AIC && core != CoreType::AIV) {
    RecordError({FatalCode::InvalidArgs,
                 fmt::format("task for func_id {} has unknown core type {}", func_id, static_cast<int>(core))});
  } else if (CoreCount(core) <= 0) {
    RecordError({FatalCode::InvalidArgs, fmt::format("task for func_id {} needs an {} core, but none are configured",
                                                     func_id, CoreTypeName(core))});
  }
  if (error_) return pypto::unexpected(*error_);
  return {};
}

std::unique_ptr<Task> Runtime::Impl::BlankTask() {
  if (spare_tasks_.empty()) return std::make_unique<Task>();
  std::unique_ptr<Task> task = std::move(spare_tasks_.back());
  spare_tasks_.pop_back();
  return task;
}

void Runtime::Impl::Recycle(std::unique_ptr<Task> task) {
  if (spare_tasks_.size() >= kSpareTasks) return;  // freed here
  std::vector<ChipTensor> tensors = std::move(task->tensors);
  std::vector<Task::Access> accesses = std::move(task->accesses);
  std::vector<Task*> dependents = std::move(task->dependents);
  *task = Task{};  // every field as new, so nothing of the last task can leak into the next
  tensors.clear();
  accesses.clear();
  dependents.clear();
  task->tensors = std::move(tensors);
  task->accesses = std::move(accesses);
  task->dependents = std::move(dependents);
  spare_tasks_.push_back(std::move(task));
}

Task& Runtime::Impl::AddTask(std::unique_ptr<Task> task) {
  task->id = next_id_++;
  if (graph_) {
    task->graph_node = graph_node_;
    graph_node_of_.push_back(graph_node_);  // at index task->id
  }
  Task& ref = *task;
  live_.emplace(ref.id, std::move(task));
  if (ref.pending == 0)
    MakeReady(ref);
  else if (ref.holding_back == 0)
    Stage(ref);  // it waits only for producers released early
  return ref;
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

// Per block: a gate that waits for what the arguments wait for, the members after the gate, and a
// join after the members that holds the arguments' accesses, so later tasks wait for every member.
// The members of a block form a cohort (all blocks together form one under sync_start): they are
// dispatched together, each on a core and a thread of its own, as a cluster runs them on a device,
// so that a member waiting at a cross-core pipe is always waiting for a peer that runs.
pypto::expected<TaskId, FatalError> Runtime::Impl::SubmitMixed(const MixedKernels& kernels, const TaskArgs& args) {
  const std::array<std::pair<CoreType, int32_t>, 3> members = {
      {{CoreType::AIC, kernels.aic}, {CoreType::AIV, kernels.aiv0}, {CoreType::AIV, kernels.aiv1}}};
  const int32_t blocks = args.launch_spec.block_num;
  std::unique_lock lock(mu_);
  if (std::ranges::none_of(members, [](const auto& m) { return m.second != kNoKernel; }))
    RecordError({FatalCode::InvalidArgs, "a mixed task names no kernel"});
  if (blocks < 1 && !error_)
    RecordError({FatalCode::InvalidArgs, fmt::format("mixed task launches {} blocks", blocks)});
  for (const auto& [core, func_id] : members)
    if (func_id != kNoKernel)
      if (auto ok = CheckSubmit(core, func_id, args); !ok) return pypto::unexpected(ok.error());
  if (error_) return pypto::unexpected(*error_);
  const int32_t named_func_id = kernels.aiv0 != kNoKernel ? kernels.aiv0 : kernels.aic;
  const int aiv_lanes = (kernels.aiv0 != kNoKernel) + (kernels.aiv1 != kNoKernel);
  const auto make_cohort = [&](int32_t n) {
    auto made = std::make_shared<Cohort>();
    made->cores = {n * (kernels.aic != kNoKernel), n * aiv_lanes};
    made->size = static_cast<size_t>(made->cores[0] + made->cores[1]);
    return made;
  };
  const bool with_aic = kernels.aic != kNoKernel;
  if (with_aic > CoreCount(CoreType::AIC) || aiv_lanes > CoreCount(CoreType::AIV)) {
    // Its members run together, so a block must fit on the cores at once.
    RecordError({FatalCode::InvalidArgs,
                 fmt::format("a block of mixed task {} (func_id {}) runs {} AIC and {} AIV kernels at once, but there "
                             "are {} AIC and {} AIV cores",
                             next_id_, named_func_id, static_cast<int>(with_aic), aiv_lanes,
                             CoreCount(CoreType::AIC), CoreCount(CoreType::AIV))});
    return pypto::unexpected(*error_);
  }
  std::shared_ptr<Cohort> cohort;
  if (args.launch_spec.require_sync_start) {
    // Co-started: one gate for all blocks, and every member of every block in one cohort.
    if (auto ok = CheckSyncStart(CoreType::AIC, named_func_id, blocks); !ok) return pypto::unexpected(ok.error());
    if (auto ok = CheckSyncStart(CoreType::AIV, named_func_id, blocks * aiv_lanes); !ok)
      return pypto::unexpected(ok.error());
    cohort = make_cohort(blocks);
  }
  auto launch = TakeSlot(lock, named_func_id, blocks);
  if (!launch) return pypto::unexpected(launch.error());

  Task* shared_gate = cohort ? AddGate(args) : nullptr;
  std::vector<TaskId> joins;
  for (int32_t block = 0; block < blocks; ++block) {
    // The gate, only when there is something to wait for (a dummy with nothing to wait for would
    // retire at once).
    Task* gate = cohort ? shared_gate : AddGate(args);
    const std::shared_ptr<Cohort> block_cohort = cohort ? cohort : make_cohort(1);
    auto mixed_block = std::make_shared<MixedBlock>(block);
    auto join = BlankTask();
    join->dummy = true;
    join->launch = *launch;
    const TaskId group = next_id_;  // the first member's id
    for (size_t m = 0; m < members.size(); ++m) {
      const auto [core, func_id] = members[m];
      if (func_id == kNoKernel) continue;
      auto task = MakeTask(BlankTask(), core, func_id, args, block, options_.observer != nullptr);
      if (core == CoreType::AIV) task->lane = static_cast<int8_t>(m - 1);
      task->mixed_group = group;
      task->id = next_id_;
      task->cohort = block_cohort;
      block_cohort->tasks.push_back(task.get());
      task->mixed_block = mixed_block;
      task->member = mixed_block->AddMember(
          {.task = task->id, .func_id = func_id, .core_type = core, .lane = task->lane});
      if (gate) AddEdge(*gate, *task);
      task->dependents.push_back(join.get());  // members run under mu_'s protection only once we let go
      ++join->pending;
      AddTask(std::move(task));
    }
    join->id = next_id_;
    RegisterAccesses(*join, args);
    joins.push_back(AddTask(std::move(join)).id);
  }
  return joins.size() == 1 ? joins.front() : JoinOf(joins);
}

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
    AddTask(std::move(task));
  }
  launch->submitted = true;
  join->id = next_id_;
  RegisterAccesses(*join, args);
  spdlog::debug("task {}: submitted func_id {} ({}) on {} co-started blocks", launch->first_task, func_id,
                CoreTypeName(core), blocks);
  return AddTask(std::move(join)).id;
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

// ---- Early resolve ------------------------------------------------------------------------------------
// Upstream pre-stages such a consumer on an idle core as a "gated" dispatch and rings its doorbell when
// the last producer completes. Here staging reserves the core (it leaves free_cores_), and the retire
// of the last producer queues the task at the front of its ready queue, where the next dispatch takes
// it onto that core. A producer counts as released only once every block of its launch has started,
// as upstream requires, so a staged task never holds a core that a block it waits for still needs.

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
  if (!ready_[type].empty() || free_cores_[type].empty()) {
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
  while (!waiting.empty() && ready_[Index(type)].empty() && !free_cores_[Index(type)].empty()) {
    auto it = live_.find(waiting.front());
    waiting.pop_front();
    if (it == live_.end()) continue;
    Task& task = *it->second;
    if (!task.staged && task.pending > 0 && task.holding_back == 0) Stage(task);
  }
}

// ---- Cross-core pipes -------------------------------------------------------------------------------
// The members of a mixed block hand tiles to each other through bounded rings (MixedBlock). A member
// that must wait (a push into a full ring, a pop from an empty one) keeps its core and its thread;
// the member that changes the ring releases it. Only a block's members touch its rings, and they run
// together (SubmitMixed), so when every member still running waits at a pipe, none can ever be
// served: the run fails at once with SchedulerTimeout, the class upstream reports such a hang under,
// naming each member's state. That is decided at every wait and every member's retirement, never
// from elapsed time, so a member that is only slow is waited for.

// The running member of a mixed block that calls a pipe op; a refusal is KernelFailed.
pypto::expected<Task*, FatalError> Runtime::Impl::PipeTask(const KernelLaunch& running, std::string_view kernel,
                                                           const char* op, bool producer, const PipeRef& pipe) {
  if (error_) return pypto::unexpected(*error_);
  auto it = live_.find(running.task_id);
  Task* task = it == live_.end() ? nullptr : it->second.get();
  const auto refuse = [&](std::string why) {
    return pypto::unexpected(FatalError{
        FatalCode::KernelFailed, fmt::format("task {} (kernel '{}'): {}", running.task_id, kernel, why)});
  };
  if (!task || !task->mixed_block)
    return refuse(fmt::format("{} is a cross-core pipe op, which only the members of a mixed task (an AIC and an AIV "
                              "kernel called from one pl.FunctionType.Group) may use",
                              op));
  // AIC produces into AIC-to-AIV pipes and consumes from AIV-to-AIC ones; AIV the other way round.
  const CoreType side = (pipe.direction == PipeDirection::AicToAiv) == producer ? CoreType::AIC : CoreType::AIV;
  if (task->core_type != side)
    return refuse(fmt::format("{} runs on the {} side of pipe {} ({}), but this kernel runs on an {} core", op,
                              CoreTypeName(side), pipe.id, PipeDirectionName(pipe.direction),
                              CoreTypeName(task->core_type)));
  if (auto conflict = task->mixed_block->PipeConflict(pipe, op)) return refuse(*conflict);
  MixedMember& member = task->mixed_block->member(task->member);
  if (member.kernel.empty()) member.kernel = std::string(kernel);
  return task;
}

pypto::expected<void, FatalError> Runtime::Impl::WaitAtPipe(std::unique_lock<std::mutex>& lock, Task& task,
                                                            PipeWait wait) {
  MixedMember& member = task.mixed_block->member(task.member);
  member.waiting = wait;
  CheckPipeStall(*task.mixed_block);
  barrier_cv_.wait(lock, [&] { return !member.waiting || error_.has_value(); });
  if (!member.waiting) return {};
  member.waiting.reset();
  return pypto::unexpected(*error_);
}

void Runtime::Impl::CheckPipeStall(const MixedBlock& block) {
  if (!error_ && block.Stalled()) RecordError({FatalCode::SchedulerTimeout, block.StallMessage()});
}

pypto::expected<void, FatalError> Runtime::Impl::PipePush(const KernelLaunch& running, std::string_view kernel,
                                                          const PipeRef& pipe, std::span<const std::byte> tile) {
  std::unique_lock lock(mu_);
  const char* op = pipe.direction == PipeDirection::AicToAiv ? "tpush_to_aiv" : "tpush_to_aic";
  auto task = PipeTask(running, kernel, op, true, pipe);
  if (!task) return pypto::unexpected(task.error());
  MixedBlock& block = *(*task)->mixed_block;
  const int lane = block.LaneOn(pipe, (*task)->member);
  while (block.Ring(pipe).Full(lane))
    if (auto ok = WaitAtPipe(lock, **task, PipeWait{.push = true, .pipe = pipe}); !ok) return ok;
  block.Ring(pipe).Push(lane, pipe.split, tile, pipe.rows, pipe.cols);
  if (block.Release(pipe, false)) barrier_cv_.notify_all();
  return {};
}

pypto::expected<void, FatalError> Runtime::Impl::PipePop(const KernelLaunch& running, std::string_view kernel,
                                                         const PipeRef& pipe, std::span<std::byte> tile) {
  std::unique_lock lock(mu_);
  const char* op = pipe.direction == PipeDirection::AicToAiv ? "tpop_from_aic" : "tpop_from_aiv";
  auto task = PipeTask(running, kernel, op, false, pipe);
  if (!task) return pypto::unexpected(task.error());
  MixedBlock& block = *(*task)->mixed_block;
  const int lane = block.LaneOn(pipe, (*task)->member);
  while (!block.Ring(pipe).HasTile(lane))
    if (auto ok = WaitAtPipe(lock, **task, PipeWait{.push = false, .pipe = pipe}); !ok) return ok;
  if (auto mismatch = block.Ring(pipe).Pop(lane, pipe.split, tile, pipe.rows, pipe.cols)) {
    RecordError({FatalCode::KernelFailed,
                 fmt::format("task {} (kernel '{}'): {} on pipe {} ({}) {}: both sides must agree on the tile's "
                             "shape and dtype",
                             running.task_id, kernel, op, pipe.id, PipeDirectionName(pipe.direction), *mismatch)});
    return pypto::unexpected(*error_);
  }
  return {};
}

pypto::expected<void, FatalError> Runtime::Impl::PipeFree(const KernelLaunch& running, std::string_view kernel,
                                                          const PipeRef& pipe) {
  std::unique_lock lock(mu_);
  const char* op = pipe.direction == PipeDirection::AicToAiv ? "tfree_to_aic" : "tfree_to_aiv";
  auto task = PipeTask(running, kernel, op, false, pipe);
  if (!task) return pypto::unexpected(task.error());
  MixedBlock& block = *(*task)->mixed_block;
  if (!block.Ring(pipe).Free(block.LaneOn(pipe, (*task)->member))) {
    RecordError({FatalCode::KernelFailed,
                 fmt::format("task {} (kernel '{}'): {} frees a slot of pipe {} ({}), but no tile popped from it is "
                             "still held: every tfree must follow a tpop",
                             running.task_id, kernel, op, pipe.id, PipeDirectionName(pipe.direction))});
    return pypto::unexpected(*error_);
  }
  if (block.Release(pipe, true)) barrier_cv_.notify_all();
  return {};
}

// ---- Cross-core events ------------------------------------------------------------------------------
// sync_set / sync_wait between the members of a mixed block (MixedBlock::Raise). A member waiting for
// an event keeps its core and its thread like one waiting at a pipe, and the same check fails the run
// once every member still running waits: a raise can only come from a member that runs.

// The running member of a mixed block that calls an event op; a refusal is KernelFailed.
pypto::expected<Task*, FatalError> Runtime::Impl::EventTask(const KernelLaunch& running, std::string_view kernel,
                                                            const char* op) {
  if (error_) return pypto::unexpected(*error_);
  auto it = live_.find(running.task_id);
  Task* task = it == live_.end() ? nullptr : it->second.get();
  if (!task || !task->mixed_block)
    return pypto::unexpected(FatalError{
        FatalCode::KernelFailed,
        fmt::format("task {} (kernel '{}'): {} is a cross-core event between the AIC and AIV kernels of one core "
                    "group, which only the members of a mixed task (called from one pl.FunctionType.Group, or a "
                    "kernel mixing cube and vector work) may use",
                    running.task_id, kernel, op)});
  MixedMember& member = task->mixed_block->member(task->member);
  if (member.kernel.empty()) member.kernel = std::string(kernel);
  return task;
}

pypto::expected<void, FatalError> Runtime::Impl::EventSet(const KernelLaunch& running, std::string_view kernel,
                                                          const EventRef& event) {
  std::unique_lock lock(mu_);
  auto task = EventTask(running, kernel, "sync_set");
  if (!task) return pypto::unexpected(task.error());
  MixedBlock& block = *(*task)->mixed_block;
  if (auto refused = block.Raise((*task)->member, event)) {
    RecordError({FatalCode::KernelFailed, fmt::format("task {} (kernel '{}'): {}", running.task_id, kernel, *refused)});
    return pypto::unexpected(*error_);
  }
  if (block.ReleaseEvents()) barrier_cv_.notify_all();
  return {};
}

pypto::expected<void, FatalError> Runtime::Impl::EventWait(const KernelLaunch& running, std::string_view kernel,
                                                           const EventRef& event) {
  std::unique_lock lock(mu_);
  auto task = EventTask(running, kernel, "sync_wait");
  if (!task) return pypto::unexpected(task.error());
  MixedBlock& block = *(*task)->mixed_block;
  const size_t index = (*task)->member;
  MixedMember& member = block.member(index);
  while (!block.EventPending(index, event.id)) {
    member.waiting_event = event.id;
    CheckPipeStall(block);
    barrier_cv_.wait(lock, [&] { return !member.waiting_event || error_.has_value(); });
    if (member.waiting_event) {
      member.waiting_event.reset();
      return pypto::unexpected(*error_);
    }
  }
  block.ConsumeEvent(index, event.id);
  return {};
}

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
  std::vector<size_t> queued, held_back, finished;
  CoreType type = CoreType::AIV;
  for (size_t b = 0; b < launch.blocks.size(); ++b) {
    const Task* task = launch.blocks[b];
    if (!task) {
      finished.push_back(b);
    } else if (task->at_barrier) {
      type = task->core_type;
      waiting.push_back(fmt::format("{} on {} core {}", b, CoreTypeName(task->core_type), task->core));
    } else {
      (task->pending > 0 ? held_back : queued).push_back(b);
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
  if (!held_back.empty())
    text += fmt::format("; block {} cannot start: each waits, through a tensor the blocks all write, for a block "
                        "at the barrier (without sync_start, the blocks of a launch that write one tensor run one "
                        "after another)",
                        fmt::join(held_back, ", "));
  if (!finished.empty()) text += fmt::format("; block {} finished without reaching it", fmt::join(finished, ", "));
  if (!queued.empty() || !held_back.empty())
    text += fmt::format("; launch it with pl.spmd(..., sync_start=True) and at most {} blocks, so that every block "
                        "holds a core at the same time",
                        CoreCount(type));
  return text;
}

// Called with mu_ held, before the task's own writes are registered (a task never waits for itself).
void Runtime::Impl::AddDependencies(Task& task, const TaskArgs& args) {
  for (TaskId id : args.dependencies()) {
    if (auto producer = live_.find(id); producer != live_.end()) AddEdge(*producer->second, task);
    if (graph_) GraphEdge(id, DepSource::Explicit, -1);
  }
  if (InManualScope()) return;  // as upstream: no creator edges and no overlap lookups either
  for (size_t i = 0; i < args.tensors().size(); ++i) {
    const TensorArg& arg = args.tensors()[i];
    if (arg.direction == ArgDirection::NoDep) continue;
    // Creator edge: a tensor produced by a task still in flight.
    if (arg.tensor.owner_task_id != kInvalidTaskId) {
      if (auto owner = live_.find(arg.tensor.owner_task_id); owner != live_.end())
        AddEdge(*owner->second, task);
      if (graph_) GraphEdge(arg.tensor.owner_task_id, DepSource::Creator, static_cast<int32_t>(i));
    }
    auto accesses = accesses_.find(arg.tensor.buffer_addr);
    if (accesses == accesses_.end()) continue;
    // A read waits for earlier writes of its bytes (RAW); a write also for earlier reads (WAR)
    // and writes (WAW), so it never overwrites what a task still in flight reads or writes.
    // Finished tasks are found only while the graph is recorded: an edge of the graph, no wait.
    const ByteRange bytes = ViewBytes(arg.tensor);
    const auto wait_for = [&](const AccessRef& earlier) {
      if (graph_)
        graph_->AddEdge({.pred = earlier.task->graph_node,
                         .succ = graph_node_,
                         .source = DepSource::Overlap,
                         .arg = static_cast<int32_t>(i),
                         .producer_arg = earlier.task->accesses[earlier.slot].arg});
      if (!earlier.task->retired) AddEdge(*earlier.task, task);
    };
    accesses->second.writes.ForEachOverlapping(bytes, wait_for);
    if (!Writes(arg.direction)) continue;
    accesses->second.reads.ForEachOverlapping(bytes, wait_for);
  }
}

// Each edge once: the consumer is always the task being submitted, the newest of all, so a producer
// that already has an edge to it has it as its last dependent.
void Runtime::Impl::AddEdge(Task& producer, Task& consumer) {
  if (producer.last_dependent == consumer.id) return;
  producer.last_dependent = consumer.id;
  producer.dependents.push_back(&consumer);
  ++consumer.pending;
  if (!producer.released_early) ++consumer.holding_back;
}

// A task of a manual scope registers nothing: later tasks wait for it only when they name it.
void Runtime::Impl::RegisterAccesses(Task& task, const TaskArgs& args) {
  if (InManualScope()) return;
  for (size_t i = 0; i < args.tensors().size(); ++i) {
    const TensorArg& arg = args.tensors()[i];
    if (arg.direction == ArgDirection::NoDep) continue;
    const ByteRange bytes = ViewBytes(arg.tensor);
    if (bytes.empty()) continue;  // no dependency either way
    auto& accesses = accesses_[arg.tensor.buffer_addr];
    const bool write = Writes(arg.direction);
    if (write) {
      // This write now orders every earlier access within its bytes: any later access to those bytes
      // overlaps it and waits for it, and it waits for them. They need not be looked at again, which
      // keeps a chain of updates to one tensor linear instead of quadratic.
      const auto forget = [](const AccessRef& earlier) { earlier.task->accesses[earlier.slot].live = false; };
      accesses.reads.EraseCovered(bytes, forget);
      accesses.writes.EraseCovered(bytes, forget);
    }
    const AccessRef ref{&task, static_cast<uint32_t>(task.accesses.size())};
    const AccessIndex::Handle entry = (write ? accesses.writes : accesses.reads).Insert(bytes, ref);
    task.accesses.push_back({.buffer_addr = arg.tensor.buffer_addr,
                             .write = write,
                             .live = true,
                             .arg = static_cast<uint16_t>(i),
                             .entry = entry});
  }
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
  RestartOuterScope();
  ForgetRetired();
  next_id_ = 0;
  completed_ = 0;
  error_.reset();
}

size_t Runtime::Impl::tasks_completed() const {
  std::lock_guard lock(mu_);
  return completed_;
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
    ++running_;
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

// Called with mu_ held. Frees the core and wakes what this task was holding back.
void Runtime::Impl::Retire(Task& task, int core) {
  if (!task.dummy) free_cores_[Index(task.core_type)].push_back(core);
  for (const Task::Access& access : task.accesses) {
    if (!access.live || graph_) continue;  // a later write covering it has taken its place, or it is kept
    auto buffer = accesses_.find(access.buffer_addr);  // there while it holds a live access
    (access.write ? buffer->second.writes : buffer->second.reads).Erase(access.entry);
    if (buffer->second.reads.empty() && buffer->second.writes.empty()) accesses_.erase(buffer);
  }
  if (task.launch && !task.launch->blocks.empty() && !task.dummy)
    task.launch->blocks[static_cast<size_t>(task.local.block_idx)] = nullptr;
  if (task.launch && --task.launch->blocks_left == 0) FinishLaunch(*task.launch);
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

Runtime::Runtime(RuntimeOptions options, CoreExecutor& executor)
    : impl_(std::make_unique<Impl>(options, executor)) {}
Runtime::~Runtime() = default;

// ---- The dependency graph (RuntimeOptions::dep_graph) -----------------------------------------------

template <typename F>
pypto::expected<TaskId, FatalError> Runtime::Impl::Graphed(const MixedKernels& kernels, const TaskArgs& args,
                                                           F submit) {
  {
    std::lock_guard lock(mu_);
    graph_node_ = graph_->BeginSubmit(kernels, args, InManualScope());
  }
  auto id = submit();
  std::lock_guard lock(mu_);
  graph_->EndSubmit(graph_node_, id ? *id : kInvalidTaskId);
  return id;
}

pypto::expected<TaskId, FatalError> Runtime::Impl::SubmitGraphed(CoreType core, int32_t func_id,
                                                                 const TaskArgs& args) {
  if (!graph_) return Submit(core, func_id, args);
  MixedKernels kernels;
  (core == CoreType::AIC ? kernels.aic : kernels.aiv0) = func_id;
  return Graphed(kernels, args, [&] { return Submit(core, func_id, args); });
}

pypto::expected<TaskId, FatalError> Runtime::Impl::SubmitMixedGraphed(const MixedKernels& kernels,
                                                                      const TaskArgs& args) {
  if (!graph_) return SubmitMixed(kernels, args);
  return Graphed(kernels, args, [&] { return SubmitMixed(kernels, args); });
}

pypto::expected<TaskId, FatalError> Runtime::Impl::SubmitDummyGraphed(const TaskArgs& args) {
  if (!graph_) return SubmitDummy(args);
  return Graphed(MixedKernels{}, args, [&] { return SubmitDummy(args); });
}

// An id of this run names a task whether it is live or finished; any other (kInvalidTaskId, or an id
// from before a Reset) names nothing, as it imposes nothing.
void Runtime::Impl::GraphEdge(TaskId pred, DepSource source, int32_t arg) {
  if (pred >= graph_node_of_.size()) return;
  graph_->AddEdge({.pred = graph_node_of_[pred], .succ = graph_node_, .source = source, .arg = arg});
}

// With mu_ held and no task live: the finished tasks kept for the graph, and their accesses, go.
void Runtime::Impl::ForgetRetired() {
  if (!graph_) return;
  accesses_.clear();
  for (std::unique_ptr<Task>& task : retired_) Recycle(std::move(task));
  retired_.clear();
  graph_node_of_.clear();
}

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
pypto::expected<void, FatalError> Runtime::WaitAll() { return impl_->WaitAll(); }
void Runtime::Reset() { impl_->Reset(); }
size_t Runtime::tasks_completed() const { return impl_->tasks_completed(); }

}  // namespace pypto::rt
