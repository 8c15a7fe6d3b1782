// Cross-core pipes and events between the members of a mixed block (the LaunchBarrier pipe and event
// ops): moving tiles through a block's bounded rings, raising and waiting for events, and failing the
// run when every member still running waits on its peers.
#include <fmt/format.h>

#include <cstddef>
#include <mutex>
#include <span>
#include <string>
#include <string_view>

#include "mixed_block.h"
#include "runtime_impl.h"

namespace pypto::rt {

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
  if (barrier_waiters_ > 0) CheckBarrierStall();  // the peer it waits for may wait at a syncall
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
    if (barrier_waiters_ > 0) CheckBarrierStall();  // the peer it waits for may wait at a syncall
    barrier_cv_.wait(lock, [&] { return !member.waiting_event || error_.has_value(); });
    if (member.waiting_event) {
      member.waiting_event.reset();
      return pypto::unexpected(*error_);
    }
  }
  block.ConsumeEvent(index, event.id);
  return {};
}

}  // namespace pypto::rt
