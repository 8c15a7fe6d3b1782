#include "mixed_race.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace pypto::sim {
namespace {

// The slots a kernel stores into (atomic adds commute, and are left out as the block check does).
std::vector<uint32_t> StoredSlots(const DecodedKernel& kernel) {
  std::vector<uint32_t> slots;
  for (const Instr& instr : kernel.code)
    if ((instr.op == Opcode::Store && !instr.atomic_add) || instr.op == Opcode::WriteScalar)
      if (instr.tensor_slot < kernel.tensor_count && std::ranges::find(slots, instr.tensor_slot) == slots.end())
        slots.push_back(instr.tensor_slot);
  return slots;
}

// Producer and consumer lanes of a ring: a split pipe has one per AIV lane on its AIV side.
int Producers(const rt::PipeRef& pipe) {
  return pipe.split != rt::PipeSplit::Whole && pipe.direction == rt::PipeDirection::AivToAic ? 2 : 1;
}
int Consumers(const rt::PipeRef& pipe) {
  return pipe.split != rt::PipeSplit::Whole && pipe.direction == rt::PipeDirection::AicToAiv ? 2 : 1;
}

}  // namespace

void NoteMixedTasks(const rt::TaskPlan& plan, std::vector<DecodedKernel>& kernels) {
  const auto find = [&](int32_t func_id) -> DecodedKernel* {
    for (DecodedKernel& kernel : kernels)
      if (kernel.func_id == func_id && func_id != rt::kNoKernel) return &kernel;
    return nullptr;
  };
  for (const rt::PlanSubmit& submit : plan.submits) {
    if (!submit.mixed) continue;
    const std::array<int32_t, 3> ids = {submit.mixed->aic, submit.mixed->aiv0, submit.mixed->aiv1};
    const int count = static_cast<int>(std::ranges::count_if(ids, [](int32_t id) { return id != rt::kNoKernel; }));
    std::vector<uint32_t> stores;
    for (int32_t id : ids)
      if (const DecodedKernel* kernel = find(id))
        for (uint32_t slot : StoredSlots(*kernel))
          if (std::ranges::find(stores, slot) == stores.end()) stores.push_back(slot);
    for (int32_t id : ids) {
      DecodedKernel* kernel = find(id);
      if (!kernel) continue;
      kernel->mixed_members = kernel->mixed_members == 0 || kernel->mixed_members == count ? count : -1;
      for (uint32_t slot : stores)
        if (std::ranges::find(kernel->mixed_stores, slot) == kernel->mixed_stores.end())
          kernel->mixed_stores.push_back(slot);
    }
  }
}

// ---- MemberOrder ----

void MemberOrder::Start(const DecodedKernel& kernel, const rt::KernelLaunch& launch, size_t member,
                        MixedOrder& order, std::mutex& mu) {
  accesses_.Start(kernel, launch.args, kernel.mixed_stores);
  epochs_.assign(1, VectorClock{});
  clock_ = {};
  member_ = member;
  syncalls_ = 0;
  order_ = &order;
  mu_ = &mu;
}

// Accesses from here on are of a new epoch, with the clock as it is now. An epoch no access was
// logged in takes the new clock instead.
void MemberOrder::NewEpoch() {
  const auto& ranges = accesses_.ranges();
  if (ranges.empty() || ranges.back().epoch + 1 < epochs_.size()) {
    epochs_.back() = clock_;
    return;
  }
  accesses_.PassedBarrier();
  epochs_.push_back(clock_);
}

void MemberOrder::Tick() {
  ++clock_[member_];
  NewEpoch();
}

void MemberOrder::Join(const VectorClock& other) {
  for (size_t i = 0; i < kMixedMembers; ++i) clock_[i] = std::max(clock_[i], other[i]);
  NewEpoch();
}

MixedOrder::Ring& MemberOrder::RingOf(const rt::PipeRef& pipe) {
  MixedOrder::Ring& ring = order_->rings[{pipe.id, pipe.direction}];
  if (ring.slots == 0) ring.slots = std::max(pipe.slots, 1);
  // The lanes of a block share a whole pipe's AIV side in an order the run picks.
  if (Aiv() && pipe.split == rt::PipeSplit::Whole) order_->aiv_whole_pipe = true;
  return ring;
}

void MemberOrder::BeforePush(const rt::PipeRef& pipe) {
  std::lock_guard lock(*mu_);
  Tick();
  auto& pushes = RingOf(pipe).pushes[RingLane(pipe)];
  pushed_tile_ = pushes.size();
  pushes.push_back(clock_);
}

// A push of tile n took the slot of tile n - slots: every consumer lane had freed it.
void MemberOrder::AfterPush(const rt::PipeRef& pipe) {
  std::lock_guard lock(*mu_);
  const MixedOrder::Ring& ring = RingOf(pipe);
  if (pushed_tile_ < static_cast<size_t>(ring.slots)) return;
  const size_t freed = pushed_tile_ - static_cast<size_t>(ring.slots);
  for (int lane = 0; lane < Consumers(pipe); ++lane)
    if (freed < ring.frees[lane].size()) Join(ring.frees[lane][freed]);
}

// The k-th pop of a consumer lane took tile k, once every producer lane had pushed it.
void MemberOrder::AfterPop(const rt::PipeRef& pipe) {
  std::lock_guard lock(*mu_);
  MixedOrder::Ring& ring = RingOf(pipe);
  const size_t tile = ring.pops[RingLane(pipe)]++;
  for (int lane = 0; lane < Producers(pipe); ++lane)
    if (tile < ring.pushes[lane].size()) Join(ring.pushes[lane][tile]);
}

void MemberOrder::BeforeFree(const rt::PipeRef& pipe) {
  std::lock_guard lock(*mu_);
  Tick();
  RingOf(pipe).frees[RingLane(pipe)].push_back(clock_);
}

void MemberOrder::BeforeSet(const rt::EventRef& event) {
  std::lock_guard lock(*mu_);
  Tick();
  if (!Aiv()) order_->cube_raises[event.id].push_back(clock_);
  else order_->lane_raises[{event.mode, event.id}][Lane()].push_back(clock_);
}

// The k-th wait of a member for an id consumed the k-th raise delivered to it: on the AIC, the k-th
// mode-2 raise of every lane; on a lane, the AIC's k-th raise or the k-th mode-1 raise of every lane.
void MemberOrder::AfterWait(const rt::EventRef& event) {
  std::lock_guard lock(*mu_);
  const size_t k = order_->waits[{member_, event.id}]++;
  const auto join_lanes = [&](int32_t mode) {
    const auto it = order_->lane_raises.find({mode, event.id});
    if (it == order_->lane_raises.end()) return;
    for (const auto& raises : it->second)
      if (k < raises.size()) Join(raises[k]);
  };
  if (!Aiv()) return join_lanes(2);
  const auto cube = order_->cube_raises.find(event.id);
  if (cube != order_->cube_raises.end() && k < cube->second.size()) return Join(cube->second[k]);
  join_lanes(1);
}

// Every member of the block arrives at a syncall before any passes it.
void MemberOrder::BeforeSyncAll() {
  std::lock_guard lock(*mu_);
  Tick();
  if (order_->syncalls.size() <= syncalls_) order_->syncalls.resize(syncalls_ + 1);
  order_->syncalls[syncalls_].push_back(clock_);
}

void MemberOrder::AfterSyncAll() {
  std::lock_guard lock(*mu_);
  for (const VectorClock& arrival : order_->syncalls[syncalls_]) Join(arrival);
  ++syncalls_;
}

// ---- MixedRaceDetector ----

pypto::expected<void, rt::FatalError> MixedRaceDetector::RunMember(const DecodedKernel& kernel,
                                                                   const rt::KernelLaunch& launch, const Run& run) {
  if (kernel.mixed_members < 1 || kernel.external_entry || launch.mixed_group == rt::kInvalidTaskId) return run();
  const auto* global = reinterpret_cast<const rt::GlobalContext*>(launch.args[rt::kGlobalContextSlot]);
  const size_t member = kernel.core_type == rt::CoreType::AIC ? 0 : global && global->sub_block_id == 1 ? 2 : 1;
  std::unique_lock lock(mu_);
  Pending& pending = pending_[launch.mixed_group];
  lock.unlock();

  thread_local MemberOrder order;  // reused: its memory stays with the thread
  order.Start(kernel, launch, member, pending.order, mu_);
  t_block_accesses = &order.accesses();
  t_member_order = &order;
  auto result = run();
  t_block_accesses = nullptr;
  t_member_order = nullptr;

  lock.lock();
  const bool twice = std::ranges::any_of(pending.members, [&](const MemberLog& log) { return log.member == member; });
  if (!result || order.accesses().overflowed() || twice) {
    pending.unchecked = true;
  } else {
    pending.members.push_back({member, &kernel, launch.core_index, MergeRanges(std::move(order.accesses().ranges())),
                               std::move(order.accesses().values()), std::move(order.epochs())});
  }
  if (++pending.returned < kernel.mixed_members) return result;
  std::optional<std::string> race;
  if (result && !pending.unchecked && !Ambiguous(pending)) race = FirstRace(kernel, launch, pending);
  pending_.erase(launch.mixed_group);
  if (!result) return result;
  if (race) return pypto::unexpected(rt::FatalError{rt::FatalCode::KernelFailed, *race});
  return {};
}

// Whether some match of an op with its peer's depended on the timing (mixed_race.h).
bool MixedRaceDetector::Ambiguous(const Pending& pending) {
  const MixedOrder& order = pending.order;
  const bool two_lanes = std::ranges::any_of(pending.members, [](const MemberLog& log) { return log.member == 2; });
  if (two_lanes && order.aiv_whole_pipe) return true;
  for (const auto& [id, raises] : order.cube_raises)
    if (order.lane_raises.contains({1, id})) return true;
  return false;
}

// The first pair from two members, one of them a write, that overlap and that no edge orders.
std::optional<std::string> MixedRaceDetector::FirstRace(const DecodedKernel& kernel, const rt::KernelLaunch& launch,
                                                        const Pending& pending) {
  const auto& logs = pending.members;
  std::vector<SweptAccess> all;
  for (size_t i = 0; i < logs.size(); ++i) {
    for (const auto& range : logs[i].ranges)
      all.push_back({range.first, range.last, range.write ? logs[i].values.data() + range.data : nullptr, range.epoch,
                     static_cast<uint32_t>(i), static_cast<uint32_t>(logs[i].member), range.write});
  }
  // a happens before b, or b before a: the later one's clock covers the earlier's own entry.
  const auto ordered = [&](const SweptAccess& a, const SweptAccess& b) {
    const MemberLog &x = logs[a.owner], &y = logs[b.owner];
    const VectorClock &at_a = x.epochs[a.epoch], &at_b = y.epochs[b.epoch];
    return at_b[x.member] > at_a[x.member] || at_a[y.member] > at_b[y.member];
  };
  const auto race = FirstUnorderedOverlap(std::move(all), ordered);
  if (!race) return std::nullopt;
  return RaceMessage(kernel, launch, pending, race->writer, race->other, race->first, race->last);
}

std::string MixedRaceDetector::RaceMessage(const DecodedKernel& kernel, const rt::KernelLaunch& launch,
                                           const Pending& pending, const SweptAccess& writer,
                                           const SweptAccess& other,
                                           uint64_t first, uint64_t last) {
  const auto& logs = pending.members;
  const bool two_lanes = std::ranges::any_of(logs, [](const MemberLog& log) { return log.member == 2; });
  const auto who = [&](const MemberLog& log) {
    const bool aiv = log.member != 0;
    std::string text = fmt::format("kernel '{}' on {} core {}", log.kernel->name, aiv ? "AIV" : "AIC", log.core);
    if (aiv && two_lanes) text += fmt::format(" (lane {})", log.member - 1);
    return text;
  };
  const RacedRegion region = RegionOf(kernel, launch.args, first, last);
  const MemberLog &w = logs[writer.owner], &o = logs[other.owner];
  std::string what;
  if (other.write) {
    const MemberLog &a = w.member < o.member ? w : o, &b = w.member < o.member ? o : w;
    what = fmt::format("{} and {} both wrote tensor {}", who(a), who(b), region.tensor);
  } else {
    what = fmt::format("{} wrote tensor {} where {} read it", who(w), region.tensor, who(o));
  }
  const auto* local = reinterpret_cast<const rt::LocalContext*>(launch.args[rt::kLocalContextSlot]);
  return fmt::format(
      "data race between the members of a mixed task: in task {} (block {} of a mixed task), {}, within elements "
      "[{}, {}) of its buffer, with no cross-core pipe or event ordering the two accesses. The cube and vector "
      "kernels of a block run side by side: hand data to a peer through tpush/tpop, or write it before a sync_set "
      "that the peer's sync_wait waits for before it touches the same elements",
      launch.mixed_group, local ? local->block_idx : 0, what, region.first, region.last);
}

void MixedRaceDetector::Clear() {
  std::lock_guard lock(mu_);
  pending_.clear();
}

}  // namespace pypto::sim
