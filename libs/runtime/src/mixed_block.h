// One block of a mixed task as the scheduler sees it once dispatched: its members (an AIC kernel and
// one or two AIV lanes, running together) and the cross-core pipes between them. Only the members
// push, pop and free a block's pipes, so whether a pipe can still move is decided from the members'
// states alone: when every member still running waits at a pipe, none of them can ever be served.
// Not thread-safe: the runtime guards it with its scheduling mutex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pypto/runtime/runtime.h"

namespace pypto::rt {

// A bounded ring of slots. A slot is taken from push until the consumer frees it: tiles pushed and
// not yet popped wait in `pushed`, popped ones count in `popped` until freed.
struct PipeRing {
  int32_t slots = 2;
  std::deque<std::vector<std::byte>> pushed;
  int32_t popped = 0;
  int64_t pushes = 0, pops = 0, frees = 0;  // totals, for a diagnosis

  bool full() const { return static_cast<int64_t>(pushed.size()) + popped >= slots; }
};

// What a member waits for: a free slot (push) or a tile (pop) of one pipe.
struct PipeWait {
  bool push = false;
  PipeRef pipe;
};

struct MixedMember {
  TaskId task = kInvalidTaskId;
  int32_t func_id = -1;
  CoreType core_type = CoreType::AIV;
  int lane = -1;  // AIV members: the lane
  int core = -1;  // while dispatched, and after
  std::string kernel;  // the name it gave at its first pipe op; empty until then
  bool finished = false;
  std::optional<PipeWait> waiting;
};

class MixedBlock {
 public:
  explicit MixedBlock(int32_t block) : block_(block) {}

  // Returns the member's index.
  size_t AddMember(MixedMember member);
  MixedMember& member(size_t index) { return members_[index]; }

  // The ring of `pipe`, made with pipe.slots slots by its first use.
  PipeRing& Ring(const PipeRef& pipe);

  // The members waiting at `pipe` for a push (push == false) or a free slot (push == true) stop
  // waiting: they look again. Returns whether any did.
  bool Release(const PipeRef& pipe, bool push);

  // Whether no member can ever move again: some member waits at a pipe and every member still
  // running does.
  bool Stalled() const;
  // Why: each member's state and what its pipe holds.
  std::string StallMessage() const;

 private:
  std::string Describe(const MixedMember& member) const;
  std::string Name(const MixedMember& member) const;

  int32_t block_;
  std::vector<MixedMember> members_;
  std::map<std::pair<int32_t, PipeDirection>, PipeRing> rings_;
};

}  // namespace pypto::rt
