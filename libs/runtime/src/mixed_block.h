// One block of a mixed task as the scheduler sees it once dispatched: its members (an AIC kernel and
// one or two AIV lanes, running together) and the cross-core pipes between them. Only the members
// push, pop and free a block's pipes, so whether a pipe can still move is decided from the members'
// states alone: when every member still running waits at a pipe, none of them can ever be served.
// Not thread-safe: the runtime guards it with its scheduling mutex.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "pypto/runtime/runtime.h"

namespace pypto::rt {

// A bounded ring of slots. Tile number k takes a slot from its first push until every consumer lane
// has freed it. A pipe split between the two AIV lanes (PipeSplit) has two lanes on its AIV side,
// each counting its own pushes, pops and frees: each lane pops its half of every tile the cube
// pushes, and the cube pops a tile once both lanes pushed their halves (each tile may be cut its own
// way). Every other side, and both sides of a whole pipe, is one lane (index 0): the AIV lanes of a
// block share a whole pipe's tiles in order.
struct PipeRing {
  // What one lane pushed of a tile: the whole tile, or (AIV to AIC, split) that lane's half.
  struct Part {
    std::vector<std::byte> bytes;
    int64_t rows = 0, cols = 0;
  };
  struct Slot {
    std::array<Part, 2> parts;  // by producer lane
    PipeSplit split = PipeSplit::Whole;  // how the tile is cut (a split pipe may cut each tile its own way)
  };

  int32_t slots = 2;
  bool split = false;  // split between the AIV lanes (set by the first use)
  int producers = 1, consumers = 1;
  std::deque<Slot> held;   // the tiles whose slot is taken, oldest first: held[i] is tile first_held + i
  int64_t first_held = 0;
  std::array<int64_t, 2> pushes{}, pops{}, frees{};  // by lane

  // Tiles every producer lane has pushed, every consumer lane has popped, and freed.
  int64_t Pushed() const;
  int64_t Popped() const;
  int64_t Freed() const;
  // Whether producer `lane` must wait for a free slot, and whether consumer `lane` has a tile to pop.
  bool Full(int lane) const { return pushes[lane] - first_held >= slots; }
  bool HasTile(int lane) const { return pops[lane] < Pushed(); }

  void Push(int lane, PipeSplit cut, std::span<const std::byte> tile, int64_t rows, int64_t cols);
  // Copies consumer `lane`'s next tile (its half, on the AIV side of a split pipe) into `tile`, of
  // rows x cols, cut as `cut` says; on a cut, size or shape that does not fit what was pushed, says
  // why and pops nothing.
  std::optional<std::string> Pop(int lane, PipeSplit cut, std::span<std::byte> tile, int64_t rows, int64_t cols);
  // Frees consumer `lane`'s oldest popped tile; false when it holds none.
  bool Free(int lane);
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
  // Cross-core events: the raises of each id delivered to it and not yet waited for, and the id it
  // waits for in sync_wait.
  std::array<int64_t, kEventIds> events{};
  std::optional<int32_t> waiting_event;
};

class MixedBlock {
 public:
  explicit MixedBlock(int32_t block) : block_(block) {}

  // Returns the member's index.
  size_t AddMember(MixedMember member);
  MixedMember& member(size_t index) { return members_[index]; }
  const MixedMember& member(size_t index) const { return members_[index]; }

  // The ring of `pipe`, made with pipe.slots slots by its first use.
  PipeRing& Ring(const PipeRef& pipe);
  // Why `op` (the DSL's name) cannot use `pipe` as it does: split when it was first used whole or
  // the other way round, or split while the block runs its AIV kernel on one lane only; nullopt
  // when it can.
  std::optional<std::string> PipeConflict(const PipeRef& pipe, const char* op) const;
  // The lane by which member `index` counts on `pipe`'s ring: its AIV lane on a split pipe, else 0.
  int LaneOn(const PipeRef& pipe, size_t index) const;
  // How many AIV lanes the block runs its AIV kernel on.
  int AivLanes() const;

  // The members waiting at `pipe` for a push (push == false) or a free slot (push == true) stop
  // waiting: they look again. Returns whether any did.
  bool Release(const PipeRef& pipe, bool push);

  // Member `index` raises `event` (EventRef): what it reaches is delivered once every raiser it
  // needs has raised it. Says why when it cannot be (a mode the simulator does not model, a raise
  // from the wrong side, a counter past what the device holds); nullopt when it was.
  std::optional<std::string> Raise(size_t index, const EventRef& event);
  // Whether a raise of event `id` is pending for member `index`; Consume takes one.
  bool EventPending(size_t index, int32_t id) const { return members_[index].events[id] > 0; }
  void ConsumeEvent(size_t index, int32_t id) { --members_[index].events[id]; }
  // The members waiting for an event that now have one pending stop waiting. Returns whether any did.
  bool ReleaseEvents();

  // Whether no member can ever move again: some member waits at a pipe or for an event and every
  // member still running does.
  bool Stalled() const;
  // Why: each member's state and what its pipe holds.
  std::string StallMessage() const;

 private:
  std::string Describe(const MixedMember& member) const;
  std::string Name(const MixedMember& member) const;

  int32_t block_;
  std::vector<MixedMember> members_;
  std::map<std::pair<int32_t, PipeDirection>, PipeRing> rings_;
  // The raises of the AIV lanes for modes 1 and 2, by (mode, id): delivered once every lane raised.
  struct LaneRaises {
    std::array<int64_t, 2> raised{};  // by lane
    int64_t delivered = 0;
  };
  std::map<std::pair<int32_t, int32_t>, LaneRaises> lane_raises_;
  std::optional<std::string> Deliver(CoreType to, int32_t id);
  std::string DescribeEventWait(const MixedMember& member) const;
};

}  // namespace pypto::rt
