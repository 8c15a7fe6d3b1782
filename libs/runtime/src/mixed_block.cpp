#include "mixed_block.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

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

PipeRing& MixedBlock::Ring(const PipeRef& pipe) {
  auto [it, fresh] = rings_.try_emplace({pipe.id, pipe.direction});
  if (fresh) it->second.slots = std::max(pipe.slots, 1);
  return it->second;
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

bool MixedBlock::Stalled() const {
  bool waiting = false;
  for (const MixedMember& member : members_) {
    if (member.finished) continue;
    if (!member.waiting) return false;  // it may yet push, pop, free or finish
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
  if (!member.waiting) return Name(member) + " is running";
  const PipeWait& wait = *member.waiting;
  const auto ring = rings_.find({wait.pipe.id, wait.pipe.direction});
  const PipeRing empty{};
  const PipeRing& held = ring == rings_.end() ? empty : ring->second;
  const std::string pipe = fmt::format("pipe {} ({})", wait.pipe.id, PipeDirectionName(wait.pipe.direction));
  if (wait.push)
    return fmt::format("{} waits in {} for a free slot of {}, whose {} slots are all taken ({} pushed, {} popped, {} "
                       "freed so far)",
                       Name(member), WaitingOp(wait), pipe, held.slots, held.pushes, held.pops, held.frees);
  return fmt::format("{} waits in {} for a tile of {}, which holds none ({} pushed, {} popped so far)", Name(member),
                     WaitingOp(wait), pipe, held.pushes, held.pops);
}

std::string MixedBlock::StallMessage() const {
  std::vector<std::string> states;
  for (const MixedMember& member : members_) states.push_back(Describe(member));
  return fmt::format("task {} (block {} of a mixed task): its cross-core pipes can never move: {}; every tpop needs "
                     "a tpush of the peer, and a tpush into a full pipe a tfree of the peer",
                     members_.front().task, block_, fmt::join(states, "; "));
}

}  // namespace pypto::rt
