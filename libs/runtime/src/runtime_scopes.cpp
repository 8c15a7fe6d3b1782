// Scopes and task windows: every submit takes a slot in the ring of its scope's depth and gives it
// back once it has finished and its scope has ended; a submit that finds the window full waits, or
// fails with ScopeDeadlock when only open scopes hold it. Also scope nesting (manual scopes) and the
// run's outer scope. What a scope's end gives back to the dependency pools is runtime_dep_pool.cpp's.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <mutex>

#include "runtime_impl.h"

namespace pypto::rt {

pypto::expected<std::shared_ptr<Launch>, FatalError> Runtime::Impl::TakeSlot(std::unique_lock<std::mutex>& lock,
                                                                             int32_t func_id, int32_t blocks) {
  const std::shared_ptr<Scope>& scope = scopes_.back();
  const size_t ring = scope->ring;
  const size_t usable = static_cast<size_t>(std::max(options_.task_window, 2)) - 1;
  while (!error_ && slots_used_[ring] >= usable) {
    // Upstream's two verdicts: the scope alone holds the window (its admission check), or the scopes
    // sharing the last ring hold it between them (its allocator, stuck at an open scope's task).
    if (scope->launches < usable && HeldByOpenScopes(ring) >= slots_used_[ring]) {
      RecordError(FlowControlDeadlock(func_id, ring, usable));
      break;
    }
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

// Only the last ring is shared by open scopes (those at depth 3 and deeper), so only there can they
// hold a window between them that none of them fills alone.
FatalError Runtime::Impl::FlowControlDeadlock(int32_t func_id, size_t ring, size_t usable) const {
  size_t shallowest = scopes_.size() - 1;
  while (shallowest > 0 && scopes_[shallowest - 1]->ring == ring) --shallowest;
  return {FatalCode::FlowControlDeadlock,
          fmt::format("task {} (func_id {}) needs a slot of task ring {}, but all {} usable slots (task window {}) are "
                      "held by tasks of the scopes at depths {} to {}, which share that ring and give them back only "
                      "when they end: none of them submits more tasks than the window holds, but together they do; "
                      "raise the window (RunConfig(ring_task_window=...), PTO2_RING_TASK_WINDOW) or submit fewer "
                      "tasks in scopes nested at depth {} and deeper",
                      next_id_, func_id, ring, usable, options_.task_window, shallowest, scopes_.size() - 1, ring)};
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
  scopes_.push_back(std::make_shared<Scope>(
      Scope{.ring = std::min(scopes_.size(), kRings - 1), .manual = manual, .first_task = next_id_}));
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
  EndScopeDeps(scope, scopes_.size() - 1);
  scopes_.pop_back();
}

void Runtime::Impl::RestartOuterScope() {
  scopes_.assign(1, std::make_shared<Scope>(Scope{.first_task = next_id_}));
  slots_used_.fill(0);
  dep_pool_.fill({});
  pinned_writes_.clear();
  for (auto& waiting : stageable_) waiting.clear();  // no task is live: every id there is stale
}

}  // namespace pypto::rt
