// Races between the members of one block of a mixed task: its AIC kernel and its AIV lanes run side
// by side, as a core group runs them on a device, and order their work only through their cross-core
// pipes (a tpop follows the tpush of its tile, a tpush into a full ring the tfree of the slot it
// takes), their events (a sync_wait follows the sync_set it consumes) and a syncall. Two members
// that write the same bytes of a tensor, or one reading what another writes, with no chain of such
// edges between the two accesses, give whatever the timing gives: a silent data race on a device.
//
// The order is happens-before, tracked with a vector clock per member (one entry per member: AIC,
// AIV lane 0, AIV lane 1), never from timing: each op that hands something to a peer (push, free,
// set, arriving at a syncall) ticks the member's own entry and leaves a copy of its clock where the
// peer's matching op (pop, push into the freed slot, wait, passing the syncall) takes it and joins it
// into its own. A generated kernel's global accesses are logged as the block race check logs them
// (block_race.h), each run of accesses between two such ops being one epoch with its clock. Once
// every member of the block has returned, accesses of two members race when they overlap, one writes
// (with values that differ, if both do), and neither's clock at its access covers the other's.
//
// The matching op is found by counting: the k-th tpop of a ring lane takes the k-th tpush of each
// producer lane, the k-th sync_wait of a member for an id the k-th raise delivered to it. Where that
// count depends on the timing the check is skipped for the block: a whole (unsplit) pipe whose AIV
// side two lanes share, or an event id raised for the AIV lanes both by the cube and by the lanes.
// Hand-written kernels are not checked here (their accesses cannot be watched while peers run), nor
// kernels of a mixed task the plan does not describe.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "block_race.h"
#include "pypto/runtime/runtime.h"
#include "pypto/runtime/task_plan.h"
#include "pypto/support/expected.h"
#include "sim_kernel.h"

namespace pypto::sim {

// Sets each kernel's mixed_members and mixed_stores (sim_kernel.h) from the mixed tasks of `plan`.
void NoteMixedTasks(const rt::TaskPlan& plan, std::vector<DecodedKernel>& kernels);

// Per member of a block: 0 the AIC kernel, 1 and 2 the AIV lanes.
inline constexpr size_t kMixedMembers = 3;
using VectorClock = std::array<uint32_t, kMixedMembers>;

// What the members of one block leave for each other: the clocks at each op that orders them.
struct MixedOrder {
  struct Ring {
    int32_t slots = 0;  // as the first use gives it
    std::array<std::vector<VectorClock>, 2> pushes, frees;  // by lane of the ring's side, by tile
    std::array<size_t, 2> pops{};                           // by consumer lane
  };
  std::map<std::pair<int32_t, rt::PipeDirection>, Ring> rings;
  std::map<int32_t, std::vector<VectorClock>> cube_raises;  // by id: the AIC's raises (mode 2)
  // By (mode, id): each AIV lane's raises; a delivery is the k-th raise of every lane.
  std::map<std::pair<int32_t, int32_t>, std::array<std::vector<VectorClock>, 2>> lane_raises;
  std::map<std::pair<size_t, int32_t>, size_t> waits;  // by (member, id): sync_waits passed
  std::vector<std::vector<VectorClock>> syncalls;      // by barrier: each arrival's clock
  bool aiv_whole_pipe = false;  // an AIV lane used a whole pipe (shared, if the block has two lanes)
};

// The member this thread runs: its clock, its accesses and the clock of each of their epochs.
class MemberOrder {
 public:
  void Start(const DecodedKernel& kernel, const rt::KernelLaunch& launch, size_t member, MixedOrder& order,
             std::mutex& mu);

  // Around the cross-core ops of the member (sim_executor.cpp), in the order given.
  void BeforePush(const rt::PipeRef& pipe);
  void AfterPush(const rt::PipeRef& pipe);
  void AfterPop(const rt::PipeRef& pipe);
  void BeforeFree(const rt::PipeRef& pipe);
  void BeforeSet(const rt::EventRef& event);
  void AfterWait(const rt::EventRef& event);
  void BeforeSyncAll();
  void AfterSyncAll();

  BlockAccesses& accesses() { return accesses_; }
  std::vector<VectorClock>& epochs() { return epochs_; }

 private:
  int Lane() const { return member_ == 2 ? 1 : 0; }
  int RingLane(const rt::PipeRef& pipe) const { return pipe.split != rt::PipeSplit::Whole ? Lane() : 0; }
  bool Aiv() const { return member_ != 0; }
  MixedOrder::Ring& RingOf(const rt::PipeRef& pipe);
  void Tick();
  void Join(const VectorClock& other);
  void NewEpoch();

  BlockAccesses accesses_;
  std::vector<VectorClock> epochs_;
  VectorClock clock_{};
  size_t member_ = 0;
  size_t syncalls_ = 0;
  size_t pushed_tile_ = 0;  // between BeforePush and AfterPush: the tile's number on its ring lane
  MixedOrder* order_ = nullptr;
  std::mutex* mu_ = nullptr;  // guards *order_
};

// The member of a mixed block this thread runs; null otherwise.
inline thread_local MemberOrder* t_member_order = nullptr;

class MixedRaceDetector {
 public:
  using Run = std::function<pypto::expected<void, rt::FatalError>()>;

  // Runs one member of a block of a mixed task through `run`; the last member of the block to return
  // compares the accesses of them all.
  pypto::expected<void, rt::FatalError> RunMember(const DecodedKernel& kernel, const rt::KernelLaunch& launch,
                                                  const Run& run);

  // Forgets blocks some of whose members never returned (a run that failed); between runs.
  void Clear();

 private:
  // One member's accesses, once it returned.
  struct MemberLog {
    size_t member = 0;
    const DecodedKernel* kernel = nullptr;
    int core = 0;
    std::vector<BlockAccesses::Range> ranges;
    std::vector<std::byte> values;
    std::vector<VectorClock> epochs;
  };
  struct Pending {
    MixedOrder order;
    std::vector<MemberLog> members;
    int returned = 0;
    bool unchecked = false;
  };

  static bool Ambiguous(const Pending& pending);
  // `kernel` and `launch`: the last member to return, whose args[] name the tensors.
  static std::optional<std::string> FirstRace(const DecodedKernel& kernel, const rt::KernelLaunch& launch,
                                               const Pending& pending);
  static std::string RaceMessage(const DecodedKernel& kernel, const rt::KernelLaunch& launch, const Pending& pending,
                                 const SweptAccess& writer, const SweptAccess& other, uint64_t first,
                                 uint64_t last);

  std::mutex mu_;  // guards pending_ and every block's order
  std::map<rt::TaskId, Pending> pending_;  // by mixed group: a map node stays put while members run
};

}  // namespace pypto::sim
