// Dependency pools: upstream's runtime wires every edge from a producer task to a consumer with an entry
// of a pool of its consumer's ring (one ring per scope depth, depths 3 and deeper sharing the last),
// ring_dep_pool entries a ring (RunConfig(ring_dep_pool=...), $PTO2_RING_DEP_POOL; default 16384). A
// task holds its first kFaninInlineCap (64) producers inline; each one beyond takes an entry of the
// ring's fanin spill pool too, of the same size. Entries come back in task order, once the consumer has
// been consumed, which no task of a scope still open can be: the ring's oldest open scope pins every
// entry charged on that ring since it began. A submit that needs more than that leaves fails with
// DEP_POOL_OVERFLOW (4), as upstream's orchestrator does when its reclaim watermark is stuck at the
// oldest task of an open scope.
//
// What is counted is decided by the order of submits and scopes alone, never by which tasks happen to
// have finished, so the same program always gets the same verdict. A producer counts when it is a
// submit of a scope still open: upstream skips only producers already consumed, and one of an open
// scope never is (a finished one is kept for its consumers). Producers of scopes that have ended are
// taken as consumed, the most a device could reclaim; every counted edge takes its entry, as on a device
// whose producers have not finished when their consumer is wired. Edges are upstream's: the explicit
// dependencies, the creator of each tensor, and, outside manual scopes, the earlier writers of the
// bytes an input or inout argument reads (as upstream's TensorMap keeps them: every output, an inout
// taking the place of the writes it covers), one edge per producer however many arguments lead to it.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "runtime_impl.h"

namespace pypto::rt {

namespace {

bool Writes(ArgDirection direction) {
  return direction == ArgDirection::Output || direction == ArgDirection::OutputExisting ||
         direction == ArgDirection::InOut;
}

// Upstream looks up the earlier writers only for the arguments a task reads.
bool LooksUp(ArgDirection direction) { return direction == ArgDirection::Input || direction == ArgDirection::InOut; }

}  // namespace

// With mu_ held: whether `id` is a task of a scope still open. Scopes nest, so the innermost open scope
// that began at or before `id` owns it unless it lies in a scope nested there that has ended.
bool Runtime::Impl::Pinned(TaskId id) const {
  if (id == kInvalidTaskId || id >= next_id_) return false;
  for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
    if (id < (*scope)->first_task) continue;
    const auto& closed = (*scope)->closed;
    auto after = std::ranges::upper_bound(closed, id, {}, &std::pair<TaskId, TaskId>::first);
    return after == closed.begin() || std::prev(after)->second <= id;
  }
  return false;
}

pypto::expected<void, FatalError> Runtime::Impl::ChargeDepPool(int32_t func_id, const TaskArgs& args) {
  dep_producers_.clear();
  for (TaskId id : args.dependencies())
    if (Pinned(id)) dep_producers_.push_back(id);
  const bool manual = InManualScope();
  for (const TensorArg& arg : args.tensors()) {
    if (arg.direction == ArgDirection::NoDep) continue;
    if (Pinned(arg.tensor.owner_task_id)) dep_producers_.push_back(arg.tensor.owner_task_id);
    if (manual || !LooksUp(arg.direction)) continue;
    auto writes = pinned_writes_.find(arg.tensor.buffer_addr);
    if (writes == pinned_writes_.end()) continue;
    writes->second.ForEachOverlapping(ViewBytes(arg.tensor),
                                      [&](const PinnedWrite* write) { dep_producers_.push_back(write->submit); });
  }
  std::ranges::sort(dep_producers_);
  const auto duplicates = std::ranges::unique(dep_producers_);
  dep_producers_.erase(duplicates.begin(), duplicates.end());

  const size_t producers = dep_producers_.size();
  const size_t ring = scopes_.back()->ring;
  const uint64_t capacity = options_.ring_dep_pool[ring];
  DepPoolUse& use = dep_pool_[ring];
  // Upstream spills while it gathers the producers, and takes the dependency entries when it wires them.
  const uint64_t spill = producers > kFaninInlineCap ? producers - kFaninInlineCap : 0;
  if (spill > 0 && use.spilled + spill > capacity) return DepPoolOverflow(func_id, producers, true);
  if (use.entries + producers > capacity) return DepPoolOverflow(func_id, producers, false);
  use.spilled += spill;
  use.entries += producers;
  return {};
}

pypto::unexpected<FatalError> Runtime::Impl::DepPoolOverflow(int32_t func_id, size_t producers, bool spill) {
  const size_t ring = scopes_.back()->ring;
  const uint64_t capacity = options_.ring_dep_pool[ring];
  const uint64_t held = spill ? dep_pool_[ring].spilled : dep_pool_[ring].entries;
  const uint64_t needed = spill ? producers - kFaninInlineCap : producers;
  const std::string where = fmt::format("ring {} (scope depth {})", ring, scopes_.size() - 1);
  const std::string takes =
      spill ? fmt::format("{} more than the {} a task holds inline, which take as many entries of the fanin spill "
                          "pool of {}",
                          needed, kFaninInlineCap, where)
            : fmt::format("one entry each of the dependency pool of {}", where);
  const std::string why =
      needed > capacity
          ? fmt::format("which is more than the whole pool ({} entries)", capacity)
          : fmt::format("but {} of its {} entries hold the dependencies of earlier tasks of that ring, which come "
                        "back only when the scope at depth {} ends",
                        held, capacity, ring);
  RecordError({FatalCode::DepPoolOverflow,
               fmt::format("task {} (func_id {}) waits for {} producer tasks, {}, {}; raise the pool "
                           "(RunConfig(ring_dep_pool=...), PTO2_RING_DEP_POOL) or give the tasks of that scope fewer "
                           "producers (e.g. split the work into smaller scopes: a loop's body is a scope)",
                           next_id_, func_id, producers, takes, why)});
  return pypto::unexpected(*error_);
}

void Runtime::Impl::NoteSubmitted(const TaskArgs& args, TaskId id) {
  if (InManualScope()) return;  // as upstream: a manual scope's tasks register nothing
  Scope& scope = *scopes_.back();
  for (const TensorArg& arg : args.tensors()) {
    if (!Writes(arg.direction)) continue;
    const ByteRange bytes = ViewBytes(arg.tensor);
    if (bytes.empty()) continue;
    PinnedWriteIndex& index = pinned_writes_[arg.tensor.buffer_addr];
    // As upstream's TensorMap: an inout write shadows the earlier writes it covers (it waits for them, and
    // a later reader of those bytes waits for it); a pure output shadows nothing, so a reader after
    // several of them waits for each.
    if (arg.direction == ArgDirection::InOut)
      index.EraseCovered(bytes, [](PinnedWrite* earlier) { earlier->live = false; });
    PinnedWrite& write = scope.writes.emplace_back(PinnedWrite{.buffer_addr = arg.tensor.buffer_addr, .submit = id});
    write.entry = index.Insert(bytes, &write);
  }
}

// With mu_ held, as the scope at `depth` (the innermost) ends: its writes no longer pin their submits,
// its ids join the ended ranges of the scope around it, and if it was its ring's oldest open scope, the
// ring's entries can all come back.
void Runtime::Impl::EndScopeDeps(Scope& scope, size_t depth) {
  for (const PinnedWrite& write : scope.writes) {
    if (!write.live) continue;
    auto index = pinned_writes_.find(write.buffer_addr);
    index->second.Erase(write.entry);
    if (index->second.empty()) pinned_writes_.erase(index);
  }
  scope.writes.clear();
  scope.closed.clear();
  auto& around = scopes_[depth - 1]->closed;
  if (!around.empty() && around.back().second == scope.first_task)
    around.back().second = next_id_;
  else if (scope.first_task < next_id_)
    around.emplace_back(scope.first_task, next_id_);
  if (depth == scope.ring) dep_pool_[scope.ring] = {};
}

}  // namespace pypto::rt
