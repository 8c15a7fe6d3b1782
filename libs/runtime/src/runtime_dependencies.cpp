// Dependency tracking: the edges a submit gets from its explicit dependencies, its tensors' creators
// and the overlapping accesses of earlier tasks (RAW, WAR, WAW), the access index those are found in,
// and the recording of the dependency graph (RuntimeOptions::dep_graph), which keeps finished tasks'
// accesses so later submits still find them.
#include "pypto/runtime/dep_graph.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime_impl.h"

namespace pypto::rt {

namespace {

// Reads see earlier writes (RAW); writes are ordered after earlier writes (WAW).
bool Writes(ArgDirection direction) {
  return direction == ArgDirection::Output || direction == ArgDirection::OutputExisting ||
         direction == ArgDirection::InOut;
}

}  // namespace

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

pypto::expected<TaskId, FatalError> Runtime::Impl::SubmitDummyGraphed(const TaskArgs& args,
                                                                     std::optional<uint64_t> fill) {
  if (!graph_) return SubmitDummy(args, fill);
  return Graphed(MixedKernels{}, args, [&] { return SubmitDummy(args, fill); });
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

}  // namespace pypto::rt
