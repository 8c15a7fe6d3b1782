#include "mixed_block.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "pipe_split.h"

namespace pypto::rt {

const char* PipeDirectionName(PipeDirection direction) {
  return direction == PipeDirection::AicToAiv ? "AIC to AIV" : "AIV to AIC";
}

namespace {

// The op a member waits in, as the DSL spells it.
const char* WaitingOp(const PipeWait& wait) {
  const bool to_aiv = wait.pipe.direction == PipeDirection::AicToAiv;
  if (wait.push) return to_aiv ? "tpush_to_aiv" : "tpush_to_aic";
  return to_aiv ? "tpop_from_aic" : "tpop_from_aiv";
}

}  // namespace

size_t MixedBlock::AddMember(MixedMember member) {
  members_.push_back(std::move(member));
  return members_.size() - 1;
}

// ---- PipeRing ----

int64_t PipeRing::Pushed() const { return std::min(pushes[0], pushes[producers - 1]); }
int64_t PipeRing::Popped() const { return std::min(pops[0], pops[consumers - 1]); }
int64_t PipeRing::Freed() const { return std::min(frees[0], frees[consumers - 1]); }

void PipeRing::Push(int lane, PipeSplit cut, std::span<const std::byte> tile, int64_t rows, int64_t cols) {
  const auto index = static_cast<size_t>(pushes[lane] - first_held);
  if (index == held.size()) held.emplace_back().split = cut;
  held[index].parts[lane] = Part{{tile.begin(), tile.end()}, rows, cols};
  ++pushes[lane];
}

namespace {

std::string Shape(int64_t rows, int64_t cols) { return fmt::format("[{}, {}]", rows, cols); }

// Whether `bytes` hold rows x cols elements of the size `whole` (rows x cols too) has.
bool SameElements(size_t bytes, int64_t rows, int64_t cols, const PipeRing::Part& whole) {
  const int64_t cells = whole.rows * whole.cols;
  return cells > 0 && static_cast<int64_t>(whole.bytes.size()) % cells == 0 &&
         static_cast<int64_t>(bytes) == rows * cols * (static_cast<int64_t>(whole.bytes.size()) / cells);
}

}  // namespace

std::optional<std::string> PipeRing::Pop(int lane, PipeSplit cut, std::span<std::byte> tile, int64_t rows,
                                         int64_t cols) {
  Slot& slot = held[static_cast<size_t>(pops[lane] - first_held)];
  if (cut != slot.split)
    return fmt::format("cuts its tile {}, but the tile pushed is cut {}", PipeSplitName(cut), PipeSplitName(slot.split));
  const PipeSplit split = cut;
  if (split == PipeSplit::Whole) {
    const auto& whole = slot.parts[0].bytes;
    if (whole.size() != tile.size())
      return fmt::format("receives a tile of {} bytes, but the tile pushed has {} bytes", tile.size(), whole.size());
    std::copy(whole.begin(), whole.end(), tile.begin());
  } else if (consumers == 2) {  // AIC to AIV: this lane's half of the cube's tile
    const Part& whole = slot.parts[0];
    const auto [box_rows, box_cols] = LaneBox(split, whole.rows, whole.cols);
    if (rows != box_rows || cols != box_cols || !SameElements(tile.size(), rows, cols, whole))
      return fmt::format("receives a {} tile of {} bytes on lane {}, but the tile pushed is {} of {} bytes, whose "
                         "{} halves are {}",
                         Shape(rows, cols), tile.size(), lane, Shape(whole.rows, whole.cols), whole.bytes.size(),
                         PipeSplitName(split), Shape(box_rows, box_cols));
    CopyLaneHalfOut(split, lane, whole.bytes, whole.rows, whole.cols, tile);
  } else {  // AIV to AIC: both lanes' halves, put together
    std::fill(tile.begin(), tile.end(), std::byte{0});
    const auto [box_rows, box_cols] = LaneBox(split, rows, cols);
    for (int half = 0; half < 2; ++half) {
      const Part& part = slot.parts[half];
      const bool same_elements = static_cast<int64_t>(part.bytes.size()) * rows * cols ==
                                 static_cast<int64_t>(tile.size()) * box_rows * box_cols;
      if (part.rows != box_rows || part.cols != box_cols || !same_elements)
        return fmt::format("receives a {} tile of {} bytes, but lane {} pushed a {} half of {} bytes, where its {} "
                           "half is {}",
                           Shape(rows, cols), tile.size(), half, Shape(part.rows, part.cols), part.bytes.size(),
                           PipeSplitName(split), Shape(box_rows, box_cols));
      CopyLaneHalfIn(split, half, part.bytes, tile, rows, cols);
    }
  }
  ++pops[lane];
  return std::nullopt;
}

bool PipeRing::Free(int lane) {
  if (frees[lane] >= pops[lane]) return false;
  ++frees[lane];
  while (Freed() > first_held) {
    held.pop_front();
    ++first_held;
  }
  return true;
}

// ---- MixedBlock ----

PipeRing& MixedBlock::Ring(const PipeRef& pipe) {
  auto [it, fresh] = rings_.try_emplace({pipe.id, pipe.direction});
  if (fresh) {
    PipeRing& ring = it->second;
    ring.slots = std::max(pipe.slots, 1);
    ring.split = pipe.split != PipeSplit::Whole;
    ring.producers = ring.split && pipe.direction == PipeDirection::AivToAic ? 2 : 1;
    ring.consumers = ring.split && pipe.direction == PipeDirection::AicToAiv ? 2 : 1;
  }
  return it->second;
}

std::optional<std::string> MixedBlock::PipeConflict(const PipeRef& pipe, const char* op) const {
  const std::string name = fmt::format("pipe {} ({})", pipe.id, PipeDirectionName(pipe.direction));
  const bool split = pipe.split != PipeSplit::Whole;
  if (auto it = rings_.find({pipe.id, pipe.direction}); it != rings_.end() && it->second.split != split)
    return fmt::format("{} uses {} {}, but it was first used {}: a pipe is split between the AIV lanes or whole "
                       "throughout",
                       op, name, split ? fmt::format("split {}", PipeSplitName(pipe.split)) : "whole",
                       it->second.split ? "split" : "whole");
  if (split && AivLanes() != 2)
    return fmt::format("{} uses {} split {}, which needs the AIV kernel on both lanes (dual AIV dispatch), but this "
                       "block runs it on one",
                       op, name, PipeSplitName(pipe.split));
  return std::nullopt;
}

int MixedBlock::LaneOn(const PipeRef& pipe, size_t index) const {
  const MixedMember& member = members_[index];
  return pipe.split != PipeSplit::Whole && member.core_type == CoreType::AIV && member.lane > 0 ? 1 : 0;
}

int MixedBlock::AivLanes() const {
  return static_cast<int>(std::ranges::count(members_, CoreType::AIV, &MixedMember::core_type));
}

bool MixedBlock::Release(const PipeRef& pipe, bool push) {
  bool any = false;
  for (MixedMember& member : members_) {
    const auto& wait = member.waiting;
    if (!wait || wait->push != push || wait->pipe.id != pipe.id || wait->pipe.direction != pipe.direction) continue;
    member.waiting.reset();
    any = true;
  }
  return any;
}

// ---- Cross-core events ----
// The device's FFTS counts, per core and flag id, the raises delivered and not yet waited for. Which
// cores a raise reaches is its mode's: mode 2 joins the AIC and AIV of a group (the AIC's raise
// reaches both lanes, the lanes' raises reach the AIC once both raised), mode 1 the AIV lanes (once
// both raised, both receive one). Mode 0 joins every core of a type across the launch, which spans
// blocks; the simulator does not model it.

std::optional<std::string> MixedBlock::Raise(size_t index, const EventRef& event) {
  const MixedMember& member = members_[index];
  if (event.mode == 0)
    return "sync_set with ffts_mode=0 joins every core of a type in the launch, which the simulator does not "
           "support yet; use ffts_mode=2 (the AIC and AIV of a group) or 1 (the AIV lanes of a group)";
  if (member.core_type == CoreType::AIC) {
    if (event.mode == 1)
      return "sync_set with ffts_mode=1 joins the AIV lanes of a group, and this kernel runs on the AIC; raise it "
             "with ffts_mode=2 to reach the AIV lanes";
    return Deliver(CoreType::AIV, event.id);
  }
  LaneRaises& raises = lane_raises_[{event.mode, event.id}];
  ++raises.raised[static_cast<size_t>(std::max(member.lane, 0))];
  const int lanes = std::max(AivLanes(), 1);
  while (std::min(raises.raised[0], raises.raised[static_cast<size_t>(lanes - 1)]) > raises.delivered) {
    ++raises.delivered;
    if (auto overflow = Deliver(event.mode == 2 ? CoreType::AIC : CoreType::AIV, event.id)) return overflow;
  }
  return std::nullopt;
}

std::optional<std::string> MixedBlock::Deliver(CoreType to, int32_t id) {
  for (MixedMember& member : members_) {
    if (member.core_type != to) continue;
    if (++member.events[static_cast<size_t>(id)] > kMaxPendingEvents)
      return fmt::format("event {} is raised for {} {} times without a sync_wait; the device's counter holds at most "
                         "{}",
                         id, Name(member), member.events[static_cast<size_t>(id)], kMaxPendingEvents);
  }
  return std::nullopt;
}

bool MixedBlock::ReleaseEvents() {
  bool any = false;
  for (MixedMember& member : members_) {
    if (!member.waiting_event || member.events[static_cast<size_t>(*member.waiting_event)] == 0) continue;
    member.waiting_event.reset();
    any = true;
  }
  return any;
}

std::string MixedBlock::DescribeEventWait(const MixedMember& member) const {
  const int32_t id = *member.waiting_event;
  std::string raised;
  if (member.core_type == CoreType::AIC) {
    const auto it = lane_raises_.find({2, id});
    const LaneRaises none{};
    const LaneRaises& raises = it == lane_raises_.end() ? none : it->second;
    raised = AivLanes() > 1 ? fmt::format("the AIV lanes raised it {} and {} times", raises.raised[0], raises.raised[1])
                            : fmt::format("the AIV kernel raised it {} times", raises.raised[0]);
  } else {
    raised = "no raise of it by the AIC (or, with ffts_mode=1, by both AIV lanes) is pending";
  }
  return fmt::format("{} waits in sync_wait for event {} ({})", Name(member), id, raised);
}

bool MixedBlock::Stalled() const {
  bool waiting = false;
  for (const MixedMember& member : members_) {
    if (member.finished) continue;
    if (!member.waiting && !member.waiting_event) return false;  // it may yet push, pop, free, raise or finish
    waiting = true;
  }
  return waiting;
}

std::string MixedBlock::Name(const MixedMember& member) const {
  const bool two_lanes = std::ranges::count(members_, CoreType::AIV, &MixedMember::core_type) > 1;
  std::string text = member.kernel.empty() ? fmt::format("the kernel of func_id {}", member.func_id)
                                           : fmt::format("kernel '{}'", member.kernel);
  text += fmt::format(" (task {}) on {} core {}", member.task, CoreTypeName(member.core_type), member.core);
  if (two_lanes && member.core_type == CoreType::AIV) text += fmt::format(" (lane {})", member.lane);
  return text;
}

std::string MixedBlock::Describe(const MixedMember& member) const {
  if (member.finished) return Name(member) + " has finished";
  if (member.waiting_event) return DescribeEventWait(member);
  if (!member.waiting) return Name(member) + " is running";
  const PipeWait& wait = *member.waiting;
  const auto ring = rings_.find({wait.pipe.id, wait.pipe.direction});
  const PipeRing empty{};
  const PipeRing& held = ring == rings_.end() ? empty : ring->second;
  const std::string pipe = fmt::format("pipe {} ({})", wait.pipe.id, PipeDirectionName(wait.pipe.direction));
  if (wait.push)
    return fmt::format("{} waits in {} for a free slot of {}, whose {} slots are all taken ({} pushed, {} popped, {} "
                       "freed so far)",
                       Name(member), WaitingOp(wait), pipe, held.slots, held.Pushed(), held.Popped(), held.Freed());
  return fmt::format("{} waits in {} for a tile of {}, which holds none ({} pushed, {} popped so far)", Name(member),
                     WaitingOp(wait), pipe, held.Pushed(), held.Popped());
}

std::string MixedBlock::StallMessage() const {
  std::vector<std::string> states;
  for (const MixedMember& member : members_) states.push_back(Describe(member));
  const bool events = std::ranges::any_of(members_, [](const MixedMember& m) { return m.waiting_event.has_value(); });
  if (events)
    return fmt::format("task {} (block {} of a mixed task): its cross-core pipes and events can never move: {}; every "
                       "tpop needs a tpush of the peer, a tpush into a full pipe a tfree of the peer, and a sync_wait "
                       "a sync_set of the peer",
                       members_.front().task, block_, fmt::join(states, "; "));
  return fmt::format("task {} (block {} of a mixed task): its cross-core pipes can never move: {}; every tpop needs "
                     "a tpush of the peer, and a tpush into a full pipe a tfree of the peer",
                     members_.front().task, block_, fmt::join(states, "; "));
}

}  // namespace pypto::rt
