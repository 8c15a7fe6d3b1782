// Submitting work: building a task record (MakeTask, recycled tasks), checking a submit, and turning
// an SPMD launch, a mixed (AIC + AIV) launch or a dummy task into the tasks the scheduler runs, with
// the joins that give a launch its one id. Dependencies (runtime_dependencies.cpp), slots
// (runtime_scopes.cpp) and co-started launches (runtime_cohort.cpp) are their own files.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mixed_block.h"
#include "runtime_impl.h"

namespace pypto::rt {

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

// An SPMD launch of N blocks is N tasks, one per block index. A single block is a plain task. Several
// are independent of each other, as the blocks of one launch on a device run side by side on the cores
// of their type: a gate waits for what the arguments wait for, the blocks wait only for the gate (never
// for each other, although they share their arguments), and a join after them holds the arguments'
// accesses, so that later launches wait for every block. A launch is submitted under one lock hold, so
// that no block can reach a barrier before its siblings exist. The id returned is the join's.
pypto::expected<TaskId, FatalError> Runtime::Impl::Submit(CoreType core, int32_t func_id, const TaskArgs& args) {
  const int32_t blocks = args.launch_spec.block_num;
  if (blocks < 1) {
    std::lock_guard lock(mu_);
    if (!error_)
      RecordError({FatalCode::InvalidArgs, fmt::format("task for func_id {} launches {} blocks", func_id, blocks)});
    return pypto::unexpected(*error_);
  }
  if (args.launch_spec.require_sync_start) return SubmitCohort(core, func_id, args);
  std::unique_lock lock(mu_);
  if (auto ok = CheckSubmit(core, func_id, args); !ok) return pypto::unexpected(ok.error());
  auto slot = TakeSlot(lock, func_id, blocks);
  if (!slot) return pypto::unexpected(slot.error());
  if (auto ok = ChargeDepPool(func_id, args); !ok) return pypto::unexpected(ok.error());
  const std::shared_ptr<Launch> launch = std::move(*slot);
  launch->blocks.resize(static_cast<size_t>(blocks));
  launch->func_id = func_id;
  if (blocks == 1) {
    launch->first_task = next_id_;
    TaskId id = AddBlock(core, func_id, args, launch, 0, nullptr);
    launch->submitted = true;
    NoteSubmitted(args, id);
    return id;
  }
  Task* gate = AddGate(args);
  launch->first_task = next_id_;
  auto join = BlankTask();
  join->dummy = true;
  for (int32_t block = 0; block < blocks; ++block) AddBlock(core, func_id, args, launch, block, gate, join.get());
  launch->submitted = true;
  join->id = next_id_;
  RegisterAccesses(*join, args);
  spdlog::debug("task {}: submitted func_id {} ({}) on {} blocks side by side", launch->first_task, func_id,
                CoreTypeName(core), blocks);
  // Its blocks may be waiting at a barrier already: whether it can complete is decided now.
  if (barrier_waiters_ > 0) CheckBarrierStall();
  const TaskId id = AddTask(std::move(join)).id;
  NoteSubmitted(args, id);
  return id;
}

// With mu_ held: block `block_idx` of `launch`. Alone (no `join`), it takes the arguments' dependencies
// and holds their accesses itself; as one of several, it waits only for the launch's gate (if any)
// and `join` waits for it.
TaskId Runtime::Impl::AddBlock(CoreType core, int32_t func_id, const TaskArgs& args,
                               const std::shared_ptr<Launch>& launch, int32_t block_idx, Task* gate, Task* join) {
  std::unique_ptr<Task> task = MakeTask(BlankTask(), core, func_id, args, block_idx, options_.observer != nullptr);
  task->launch = launch;
  task->id = next_id_;
  launch->blocks[static_cast<size_t>(block_idx)] = task.get();
  if (join) {
    if (gate) AddEdge(*gate, *task);
    task->dependents.push_back(join);  // not AddEdge: the join gets its id after the blocks
    ++join->pending;
    ++join->holding_back;  // until the block is released early
  } else {
    AddDependencies(*task, args);
    RegisterAccesses(*task, args);
  }
  spdlog::debug("task {}: submitted func_id {} ({}) block {}, {} tensors, {} scalars, waits for {} tasks", task->id,
                func_id, CoreTypeName(core), block_idx, args.tensors().size(), args.scalars().size(), task->pending);
  return AddTask(std::move(task)).id;
}

namespace {
// A fill task fills its output tensors element by element from their origin, so each must be contiguous.
std::optional<std::string> FillRefusal(const TaskArgs& args) {
  for (const TensorArg& arg : args.tensors())
    if (arg.direction != ArgDirection::Input && !arg.tensor.is_contiguous)
      return "fill task has an output tensor that is not contiguous";
  return std::nullopt;
}
}  // namespace

pypto::expected<TaskId, FatalError> Runtime::Impl::SubmitDummy(const TaskArgs& args, std::optional<uint64_t> fill) {
  std::unique_lock lock(mu_);
  std::optional<std::string> refusal;
  if (args.has_error())
    refusal = fmt::format("dummy task has invalid arguments: {}", args.error());
  else if (fill)
    refusal = FillRefusal(args);
  if (refusal) {
    if (!error_) RecordError({FatalCode::InvalidArgs, *refusal});
    return pypto::unexpected(*error_);
  }
  auto launch = TakeSlot(lock, -1, 1);
  if (!launch) return pypto::unexpected(launch.error());
  if (auto ok = ChargeDepPool(-1, args); !ok) return pypto::unexpected(ok.error());
  auto task = BlankTask();
  task->dummy = true;
  if (fill) {
    task->fill = fill;
    for (const TensorArg& arg : args.tensors())
      if (arg.direction != ArgDirection::Input) task->tensors.push_back(arg.tensor);
  }
  task->launch = *launch;
  const TaskId id = task->id = next_id_;
  AddDependencies(*task, args);
  RegisterAccesses(*task, args);
  AddTask(std::move(task));  // a dummy with nothing to wait for retires here, its record blanked
  NoteSubmitted(args, id);
  return id;
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

// One gate that waits for what the arguments wait for, the members of every block after the gate, and
// one join after all members that holds the arguments' accesses, so later tasks wait for every member.
// The blocks wait only for the gate, never for each other (as an SPMD launch's blocks), so that they
// run side by side on free cores although they write the same tensors, and a SyncAll<false> among
// them completes when all are resident. The members of a block form a cohort (all blocks together
// form one under sync_start): they are dispatched together, each on a core and a thread of its own,
// as a cluster runs them on a device, so that a member waiting at a cross-core pipe is always waiting
// for a peer that runs.
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
  auto launch = TakeSlot(lock, named_func_id, 1);  // one join retires it
  if (!launch) return pypto::unexpected(launch.error());
  if (auto ok = ChargeDepPool(named_func_id, args); !ok) return pypto::unexpected(ok.error());

  Launch& shared = **launch;
  shared.members_per_block = static_cast<size_t>(with_aic + aiv_lanes);
  shared.members.resize(static_cast<size_t>(blocks) * shared.members_per_block);
  shared.block_cores = {static_cast<int>(with_aic), aiv_lanes};
  shared.func_id = named_func_id;
  // The gate, only when there is something to wait for (a dummy with nothing to wait for would retire
  // at once).
  Task* gate = AddGate(args);
  auto join = BlankTask();
  join->dummy = true;
  join->launch = *launch;
  for (int32_t block = 0; block < blocks; ++block) {
    const std::shared_ptr<Cohort> block_cohort = cohort ? cohort : make_cohort(1);
    auto mixed_block = std::make_shared<MixedBlock>(block);
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
      task->mixed_launch = *launch;
      shared.members[static_cast<size_t>(block) * shared.members_per_block + task->member] = task.get();
      if (gate) AddEdge(*gate, *task);
      task->dependents.push_back(join.get());  // members run under mu_'s protection only once we let go
      ++join->pending;
      // Until the member retires: members are never released early, and a join holding back nothing
      // would be released at once, staging later tasks on cores before the block has started.
      ++join->holding_back;
      AddTask(std::move(task));
    }
  }
  shared.first_task = shared.members.front()->id;
  shared.submitted = true;
  join->id = next_id_;
  RegisterAccesses(*join, args);
  const TaskId id = AddTask(std::move(join)).id;
  NoteSubmitted(args, id);
  return id;
}

}  // namespace pypto::rt
