// The scheduler: tasks wait for the earlier tasks that write what they touch, then run on a free
// logical core of their type, on a pool of worker threads.
//
// One mutex guards all scheduling state; kernels run outside it. A task's life:
//   Submit   -> its dependencies are the unfinished earlier writers of overlapping bytes (RAW, WAW);
//               it becomes ready when it has none left.
//   dispatch -> a worker takes the oldest ready task that has a free core of its type.
//   retire   -> the core is freed, its writes are forgotten, its dependents lose one dependency.
// After the first fatal error, dispatched tasks are retired without running, so the run drains and
// WaitAll returns that error. The error stays latched: a failed Runtime refuses further submits.
#include "pypto/runtime/runtime.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

namespace pypto::rt {

const char* CoreTypeName(CoreType type) { return type == CoreType::AIC ? "AIC" : "AIV"; }

namespace {

// Reads see earlier writes (RAW); writes are ordered after earlier writes (WAW).
bool Writes(ArgDirection direction) {
  return direction == ArgDirection::Output || direction == ArgDirection::OutputExisting ||
         direction == ArgDirection::InOut;
}

struct Task {
  TaskId id = kInvalidTaskId;
  int32_t func_id = -1;
  CoreType core_type = CoreType::AIV;
  // The descriptors the kernel sees; sized once at submit, so args[] may point into it.
  std::vector<ChipTensor> tensors;
  LocalContext local;
  GlobalContext global;
  std::array<int64_t, kArgSlots> args{};

  struct Write {
    uint64_t buffer_addr;
    ByteRange bytes;
  };
  std::vector<Write> writes;     // registered with the runtime until this task retires
  std::vector<Task*> dependents;  // tasks waiting for this one
  size_t pending = 0;             // unfinished tasks this one waits for
};

// Copies the arguments into the task and lays out args[]: descriptor pointers, scalar bit patterns,
// then the two contexts at their fixed slots.
std::unique_ptr<Task> MakeTask(CoreType core, int32_t func_id, const TaskArgs& args) {
  auto task = std::make_unique<Task>();
  task->func_id = func_id;
  task->core_type = core;
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

}  // namespace

class Runtime::Impl {
 public:
  Impl(RuntimeOptions options, CoreExecutor& executor);
  ~Impl();

  pypto::expected<TaskId, FatalError> Submit(CoreType core, int32_t func_id, const TaskArgs& args);
  pypto::expected<void, FatalError> WaitAll();
  size_t tasks_completed() const;

 private:
  static size_t Index(CoreType type) { return static_cast<size_t>(type); }
  int CoreCount(CoreType type) const { return type == CoreType::AIC ? options_.aic_cores : options_.aiv_cores; }

  void AddDependencies(Task& task, const TaskArgs& args);
  void AddEdge(Task& producer, Task& consumer, std::vector<Task*>& producers);
  void RegisterWrites(Task& task, const TaskArgs& args);

  void WorkerLoop();
  std::optional<CoreType> NextDispatchable() const;
  pypto::expected<void, FatalError> RunOnCore(Task& task, int core);
  void Retire(Task& task, int core);
  void RecordError(FatalError error);

  const RuntimeOptions options_;
  CoreExecutor& executor_;

  mutable std::mutex mu_;
  std::condition_variable work_cv_;  // a task may have become dispatchable, or stopping_ was set
  std::condition_variable idle_cv_;  // live_ became empty
  TaskId next_id_ = 0;
  std::unordered_map<TaskId, std::unique_ptr<Task>> live_;  // submitted and not yet retired
  // Unretired writers by allocation: dependencies are only ever found within one buffer_addr.
  std::unordered_map<uint64_t, std::vector<std::pair<Task*, ByteRange>>> writers_;
  std::array<std::deque<Task*>, 2> ready_;     // per core type, in the order tasks became ready
  std::array<std::vector<int>, 2> free_cores_;  // per core type; back() is handed out next
  std::optional<FatalError> error_;             // the first fatal error; latched
  size_t completed_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> workers_;  // last: started once everything above exists
};

Runtime::Impl::Impl(RuntimeOptions options, CoreExecutor& executor) : options_(options), executor_(executor) {
  for (CoreType type : {CoreType::AIC, CoreType::AIV}) {
    // Reversed so that the lowest-numbered core is handed out first.
    for (int core = CoreCount(type) - 1; core >= 0; --core) free_cores_[Index(type)].push_back(core);
  }
  // More workers than cores could never all hold a core at once.
  const int cores = std::max(1, std::max(0, options_.aic_cores) + std::max(0, options_.aiv_cores));
  int threads = options_.worker_threads > 0 ? options_.worker_threads
                                            : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::clamp(threads, 1, cores);
  workers_.reserve(threads);
  for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
  spdlog::debug("runtime: {} AIC + {} AIV cores, {} worker threads", options_.aic_cores, options_.aiv_cores,
                threads);
}

Runtime::Impl::~Impl() {
  {
    std::unique_lock lock(mu_);
    idle_cv_.wait(lock, [&] { return live_.empty(); });
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

pypto::expected<TaskId, FatalError> Runtime::Impl::Submit(CoreType core, int32_t func_id, const TaskArgs& args) {
  std::unique_ptr<Task> task = args.has_error() ? nullptr : MakeTask(core, func_id, args);

  std::lock_guard lock(mu_);
  if (error_) return pypto::unexpected(*error_);
  if (args.has_error()) {
    // As on the device, a malformed task is fatal for the whole run, not only refused.
    RecordError({FatalCode::InvalidArgs,
                 fmt::format("task for func_id {} has invalid arguments: {}", func_id, args.error())});
    return pypto::unexpected(*error_);
  }
  if (core != CoreType::AIC && core != CoreType::AIV) {
    RecordError({FatalCode::InvalidArgs,
                 fmt::format("task for func_id {} has unknown core type {}", func_id, static_cast<int>(core))});
    return pypto::unexpected(*error_);
  }
  if (CoreCount(core) <= 0) {
    RecordError({FatalCode::InvalidArgs,
                 fmt::format("task for func_id {} needs an {} core, but none are configured", func_id,
                             CoreTypeName(core))});
    return pypto::unexpected(*error_);
  }

  task->id = next_id_++;
  AddDependencies(*task, args);
  RegisterWrites(*task, args);
  spdlog::debug("task {}: submitted func_id {} ({}), {} tensors, {} scalars, waits for {} tasks", task->id,
                func_id, CoreTypeName(core), args.tensors().size(), args.scalars().size(), task->pending);

  const TaskId id = task->id;
  Task& ref = *task;
  live_.emplace(id, std::move(task));
  if (ref.pending == 0) {
    ready_[Index(core)].push_back(&ref);
    work_cv_.notify_all();
  }
  return id;
}

// Called with mu_ held, before the task's own writes are registered (a task never waits for itself).
void Runtime::Impl::AddDependencies(Task& task, const TaskArgs& args) {
  std::vector<Task*> producers;  // to add each edge once
  for (const TensorArg& arg : args.tensors()) {
    if (arg.direction == ArgDirection::NoDep) continue;
    // Creator edge: a tensor produced by a task still in flight.
    if (arg.tensor.owner_task_id != kInvalidTaskId) {
      if (auto owner = live_.find(arg.tensor.owner_task_id); owner != live_.end())
        AddEdge(*owner->second, task, producers);
    }
    auto writers = writers_.find(arg.tensor.buffer_addr);
    if (writers == writers_.end()) continue;
    const ByteRange bytes = ViewBytes(arg.tensor);
    for (auto& [writer, written] : writers->second) {
      if (written.overlaps(bytes)) AddEdge(*writer, task, producers);
    }
  }
}

void Runtime::Impl::AddEdge(Task& producer, Task& consumer, std::vector<Task*>& producers) {
  if (std::find(producers.begin(), producers.end(), &producer) != producers.end()) return;
  producers.push_back(&producer);
  producer.dependents.push_back(&consumer);
  ++consumer.pending;
}

void Runtime::Impl::RegisterWrites(Task& task, const TaskArgs& args) {
  for (const TensorArg& arg : args.tensors()) {
    if (!Writes(arg.direction)) continue;
    const ByteRange bytes = ViewBytes(arg.tensor);
    writers_[arg.tensor.buffer_addr].emplace_back(&task, bytes);
    task.writes.push_back({arg.tensor.buffer_addr, bytes});
  }
}

pypto::expected<void, FatalError> Runtime::Impl::WaitAll() {
  std::unique_lock lock(mu_);
  idle_cv_.wait(lock, [&] { return live_.empty(); });
  if (error_) return pypto::unexpected(*error_);
  return {};
}

size_t Runtime::Impl::tasks_completed() const {
  std::lock_guard lock(mu_);
  return completed_;
}

void Runtime::Impl::WorkerLoop() {
  std::unique_lock lock(mu_);
  while (true) {
    std::optional<CoreType> type;
    work_cv_.wait(lock, [&] { return stopping_ || (type = NextDispatchable()).has_value(); });
    if (stopping_) return;  // the destructor only stops workers once no task is live

    Task& task = *ready_[Index(*type)].front();
    ready_[Index(*type)].pop_front();
    const int core = free_cores_[Index(*type)].back();
    free_cores_[Index(*type)].pop_back();

    if (error_) {
      spdlog::debug("task {}: skipped after a fatal error", task.id);
    } else {
      lock.unlock();
      pypto::expected<void, FatalError> result = RunOnCore(task, core);
      lock.lock();
      if (result)
        ++completed_;
      else
        RecordError(std::move(result.error()));
    }
    Retire(task, core);
  }
}

// The ready type whose oldest task has the lowest id and a free core; keeps roughly program order.
std::optional<CoreType> Runtime::Impl::NextDispatchable() const {
  std::optional<CoreType> best;
  for (CoreType type : {CoreType::AIC, CoreType::AIV}) {
    const auto& queue = ready_[Index(type)];
    if (queue.empty() || free_cores_[Index(type)].empty()) continue;
    if (!best || queue.front()->id < ready_[Index(*best)].front()->id) best = type;
  }
  return best;
}

// Runs without mu_: the task and its core belong to this worker until it retires the task.
pypto::expected<void, FatalError> Runtime::Impl::RunOnCore(Task& task, int core) {
  // Upstream numbers AIVs in (AIV0, AIV1) pairs per cluster; the lane is the core's parity.
  task.global.sub_block_id = task.core_type == CoreType::AIV ? core % 2 : 0;
  const KernelLaunch launch{
      .task_id = task.id,
      .func_id = task.func_id,
      .core_type = task.core_type,
      .core_index = core,
      .args = task.args.data(),
  };
  spdlog::debug("task {}: func_id {} starts on {} core {}", task.id, task.func_id, CoreTypeName(task.core_type),
                core);
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

// Called with mu_ held. Frees the core and wakes what this task was holding back.
void Runtime::Impl::Retire(Task& task, int core) {
  free_cores_[Index(task.core_type)].push_back(core);
  for (const Task::Write& write : task.writes) {
    auto entry = writers_.find(write.buffer_addr);
    std::erase_if(entry->second, [&](const auto& writer) { return writer.first == &task; });
    if (entry->second.empty()) writers_.erase(entry);
  }
  for (Task* dependent : task.dependents) {
    if (--dependent->pending == 0) ready_[Index(dependent->core_type)].push_back(dependent);
  }
  live_.erase(task.id);  // destroys the task
  work_cv_.notify_all();
  if (live_.empty()) idle_cv_.notify_all();
}

void Runtime::Impl::RecordError(FatalError error) {
  if (error_) return;  // the first error wins
  spdlog::debug("runtime: {}", error.str());
  error_ = std::move(error);
}

Runtime::Runtime(RuntimeOptions options, CoreExecutor& executor)
    : impl_(std::make_unique<Impl>(options, executor)) {}
Runtime::~Runtime() = default;

pypto::expected<TaskId, FatalError> Runtime::SubmitAic(int32_t func_id, const TaskArgs& args) {
  return impl_->Submit(CoreType::AIC, func_id, args);
}
pypto::expected<TaskId, FatalError> Runtime::SubmitAiv(int32_t func_id, const TaskArgs& args) {
  return impl_->Submit(CoreType::AIV, func_id, args);
}
pypto::expected<TaskId, FatalError> Runtime::Submit(CoreType core, int32_t func_id, const TaskArgs& args) {
  return impl_->Submit(core, func_id, args);
}
pypto::expected<void, FatalError> Runtime::WaitAll() { return impl_->WaitAll(); }
size_t Runtime::tasks_completed() const { return impl_->tasks_completed(); }

}  // namespace pypto::rt
