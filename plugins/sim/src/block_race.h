// Races between the blocks of one SPMD launch. Its blocks run side by side in no set order, so two
// blocks writing the same bytes of a tensor, or one writing what another reads, give whatever the
// timing gives: a silent data race on a device (unless a syncall orders them). Here a generated kernel's global accesses are logged
// per block (the loads and stores of whole tiles and valid regions, scalar reads and writes) and, once
// every block of the launch has returned, compared: an overlap fails the run with KernelFailed, as a
// race between the two lanes of a dual-dispatched kernel does (lane_race.h), naming the launch, the
// two blocks, the tensor and its elements.
//
// Only what can race is logged: stores (atomic adds commute and are left out), and loads from the
// buffers the kernel stores into. A scatter by index (pl.mscatter) logs each element it writes where
// its index puts it, and a gather (pl.mgather, pl.paged_gather) each element or pool row it reads,
// as well as the entries of index tables it reads: the regions are known only from the indices at run
// time, and exactly. A log past kMaxRanges ranges is dropped and its launch goes unchecked rather than
// costing memory without end. The members of one block of a mixed task are checked apart, with the
// order their pipes and events give (mixed_race.h); the blocks of a mixed launch are not checked.
//
// A hand-written kernel cannot be watched: its writes are what changed in its tensors while it ran
// (tensor_changes.h), which holds only while no other block of the launch runs. So its blocks take
// turns. A block that waits TurnTaking::kTurnWait for its turn means the block holding it waits for others (a
// barrier, a flag in global memory): the launch then goes unchecked and its blocks run side by side,
// as they must to get anywhere. Reads are not seen, and launches whose tensors hold more than
// kMaxSnapshotBytes are not checked.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "pypto/runtime/chip_tensor.h"
#include "pypto/runtime/runtime.h"
#include "pypto/support/expected.h"
#include "sim_kernel.h"
#include "turn_taking.h"

namespace pypto::sim {

// One block's global accesses, coalesced as they come (a tile's rows are usually contiguous), with the
// bytes each write left: blocks writing the same values to the same bytes do not race (the result
// is the same whatever the order), so only writes of different values are reported.
class BlockAccesses {
 public:
  static constexpr size_t kMaxRanges = 1 << 20;
  static constexpr size_t kMaxValueBytes = size_t{512} << 20;

  // `epoch`: the syncalls the block had passed; accesses on either side of a barrier never race.
  // `data`: a write's bytes, at this offset of values().
  struct Range {
    uint64_t first, last;
    uint64_t data;
    uint32_t epoch;
    bool write;
  };

  void Start(const DecodedKernel& kernel, const int64_t* args);
  // As Start, but logging the loads from every buffer that one of args[] `stored` slots views: the
  // stores of other kernels (the members of a mixed task) count too.
  void Start(const DecodedKernel& kernel, const int64_t* args, const std::vector<uint32_t>& stored);
  // Whether a load from args[slot] is to be logged (the kernel stores into its buffer).
  bool LogsReadsOf(uint32_t slot) const { return slot < read_slots_.size() && read_slots_[slot]; }
  // `count` elements of `elem` bytes, `step` bytes apart, from `at`; a write's new values are dense at
  // `values`.
  void Read(const std::byte* at, int64_t step, int64_t count, size_t elem);
  void Write(const std::byte* at, int64_t step, int64_t count, size_t elem, const std::byte* values);
  void PassedBarrier() { ++epoch_; }

  std::vector<Range>& ranges() { return ranges_; }
  std::vector<std::byte>& values() { return values_; }
  bool overflowed() const { return overflowed_; }

 private:
  bool Full();
  void PushRead(uint64_t first, uint64_t last);
  void PushWrite(uint64_t first, uint64_t last, const std::byte* bytes);

  std::vector<bool> read_slots_;
  std::vector<Range> ranges_;
  std::vector<std::byte> values_;
  uint32_t epoch_ = 0;
  bool overflowed_ = false;
};

// The thread's log while it runs a block of a multi-block launch (or a member of a mixed task);
// null otherwise.
inline thread_local BlockAccesses* t_block_accesses = nullptr;

// A log's ranges sorted by epoch, reads merged where they overlap or touch; writes kept apart, each
// with its own bytes.
std::vector<BlockAccesses::Range> MergeRanges(std::vector<BlockAccesses::Range> ranges);

// Where a race is, for its message: the tensor of args[] whose view holds byte `first`, named as
// "'x' (args[2])" (or "a tensor"), and the elements of its buffer that bytes [first, last) cover.
struct RacedRegion {
  std::string tensor;
  uint64_t first = 0, last = 0;
};
RacedRegion RegionOf(const DecodedKernel& kernel, const int64_t* args, uint64_t first, uint64_t last);

// One logged access, for a race sweep: bytes [first, last) of the launch's buffers (a write's new bytes
// at `values`) in `epoch`, logged by `owner` (a block; a member's log), `rank` ordering ties.
struct SweptAccess {
  uint64_t first, last;
  const std::byte* values;
  uint32_t epoch;
  uint32_t owner;
  uint32_t rank;
  bool write;
};

// Bytes [first, last) that `writer` wrote and `other` also read or wrote.
struct Overlap {
  SweptAccess writer, other;
  uint64_t first, last;
};

// A sweep over `all` in address order (ties by rank: the same race every run), keeping the accesses
// still open: the first pair from two owners, one of them a write (two writes only with different
// bytes), that overlap and that `ordered` does not order. The block and mixed-member checks differ only
// in what orders two accesses.
using AccessOrder = std::function<bool(const SweptAccess&, const SweptAccess&)>;
std::optional<Overlap> FirstUnorderedOverlap(std::vector<SweptAccess> all, const AccessOrder& ordered);

class BlockRaceDetector {
 public:
  using Run = std::function<pypto::expected<void, rt::FatalError>()>;

  // Runs one block of `launch` through `run` with its accesses logged; the last block of the launch
  // to return compares them all.
  pypto::expected<void, rt::FatalError> RunBlock(const DecodedKernel& kernel, const rt::KernelLaunch& launch,
                                                 const Run& run);

  // Forgets launches some of whose blocks never returned (a run that failed); between runs.
  void Clear();

 private:
  static constexpr uint64_t kMaxSnapshotBytes = uint64_t{256} << 20;

  struct BlockLog {
    std::vector<BlockAccesses::Range> ranges;
    std::vector<std::byte> values;
  };
  struct Pending {
    int32_t returned = 0;
    std::vector<BlockLog> blocks;  // by block index
    bool unchecked = false;
    bool turn_taken = false;  // hand-written kernels: a block runs with its tensors watched
  };

  pypto::expected<void, rt::FatalError> RunExternBlock(const DecodedKernel& kernel, const rt::KernelLaunch& launch,
                                                       const rt::LocalContext& local, const Run& run);
  // With mu_ held: a block's accesses are in; the last block's return compares them all.
  pypto::expected<void, rt::FatalError> Returned(const DecodedKernel& kernel, const rt::KernelLaunch& launch,
                                                 const rt::LocalContext& local, Pending& pending);

  static std::optional<std::string> FirstRace(const DecodedKernel& kernel, const rt::KernelLaunch& launch,
                                               const Pending& pending);

  std::mutex mu_;  // guards pending_
  TurnTaking turns_;  // hand-written kernels' blocks, one launch's at a time
  std::map<rt::TaskId, Pending> pending_;  // by launch
};

}  // namespace pypto::sim
