#include "block_race.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "tensor_changes.h"

namespace pypto::sim {
namespace {

const rt::ChipTensor& TensorAt(const int64_t* args, uint32_t slot) {
  return *reinterpret_cast<const rt::ChipTensor*>(args[slot]);
}

}  // namespace

std::vector<BlockAccesses::Range> MergeRanges(std::vector<BlockAccesses::Range> ranges) {
  std::ranges::sort(ranges, [](const auto& a, const auto& b) {
    if (a.epoch != b.epoch) return a.epoch < b.epoch;
    return a.write != b.write ? a.write < b.write : a.first < b.first;
  });
  std::vector<BlockAccesses::Range> merged;
  for (const auto& range : ranges) {
    const BlockAccesses::Range* back = merged.empty() ? nullptr : &merged.back();
    if (back && !range.write && !back->write && back->epoch == range.epoch && range.first <= back->last)
      merged.back().last = std::max(back->last, range.last);
    else
      merged.push_back(range);
  }
  return merged;
}

RacedRegion RegionOf(const DecodedKernel& kernel, const int64_t* args, uint64_t first, uint64_t last) {
  for (uint32_t slot = 0; slot < kernel.tensor_count; ++slot) {
    const rt::ChipTensor& tensor = TensorAt(args, slot);
    const rt::ByteRange view = rt::ViewBytes(tensor);
    if (!(view.first <= first && first < view.last)) continue;
    std::string name = fmt::format("args[{}]", slot);
    for (const auto& param : kernel.params)
      if (param.is_tensor && param.slot == slot) name = fmt::format("'{}' (args[{}])", param.name, slot);
    const uint64_t base = tensor.buffer_addr, element = std::max<uint64_t>(1, rt::ElementSize(tensor.dtype));
    return {std::move(name), (first - base) / element, (last - base + element - 1) / element};
  }
  return {"a tensor", first, last};
}

void BlockAccesses::Start(const DecodedKernel& kernel, const int64_t* args) {
  // Loads can race only with stores: those from a buffer that some store of the kernel targets.
  std::vector<uint32_t> stored;
  for (const Instr& instr : kernel.code)
    if ((instr.op == Opcode::Store && !instr.atomic_add) || instr.op == Opcode::WriteScalar)
      if (instr.tensor_slot < kernel.tensor_count) stored.push_back(instr.tensor_slot);
  Start(kernel, args, stored);
}

void BlockAccesses::Start(const DecodedKernel& kernel, const int64_t* args, const std::vector<uint32_t>& stored) {
  ranges_.clear();
  values_.clear();
  epoch_ = 0;
  overflowed_ = false;
  std::vector<uint64_t> buffers;
  for (uint32_t slot : stored)
    if (slot < kernel.tensor_count) buffers.push_back(TensorAt(args, slot).buffer_addr);
  read_slots_.assign(kernel.tensor_count, false);
  for (uint32_t slot = 0; slot < kernel.tensor_count; ++slot)
    read_slots_[slot] = std::ranges::find(buffers, TensorAt(args, slot).buffer_addr) != buffers.end();
}

void BlockAccesses::Read(const std::byte* at, int64_t step, int64_t count, size_t elem) {
  const auto first = reinterpret_cast<uint64_t>(at);
  if (step == static_cast<int64_t>(elem)) return PushRead(first, first + static_cast<uint64_t>(count) * elem);
  for (int64_t i = 0; i < count; ++i) PushRead(first + static_cast<uint64_t>(i * step), first + i * step + elem);
}

void BlockAccesses::Write(const std::byte* at, int64_t step, int64_t count, size_t elem, const std::byte* values) {
  const auto first = reinterpret_cast<uint64_t>(at);
  if (step == static_cast<int64_t>(elem))
    return PushWrite(first, first + static_cast<uint64_t>(count) * elem, values);
  for (int64_t i = 0; i < count; ++i)
    PushWrite(first + static_cast<uint64_t>(i * step), first + i * step + elem, values + i * elem);
}

// Past its limits a log is dropped: its launch goes unchecked.
bool BlockAccesses::Full() {
  if (overflowed_) return true;
  if (ranges_.size() < kMaxRanges && values_.size() < kMaxValueBytes) return false;
  overflowed_ = true;
  ranges_ = {};
  values_ = {};
  return true;
}

void BlockAccesses::PushRead(uint64_t first, uint64_t last) {
  if (first >= last || overflowed_) return;
  if (!ranges_.empty()) {
    Range& back = ranges_.back();
    if (!back.write && back.epoch == epoch_ && first <= back.last && last >= back.first) {  // touching or overlapping
      back.first = std::min(back.first, first);
      back.last = std::max(back.last, last);
      return;
    }
  }
  if (!Full()) ranges_.push_back({first, last, 0, epoch_, false});
}

void BlockAccesses::PushWrite(uint64_t first, uint64_t last, const std::byte* bytes) {
  if (first >= last || overflowed_) return;
  if (!ranges_.empty()) {
    Range& back = ranges_.back();
    if (back.write && back.epoch == epoch_ && first == back.last && back.data + (back.last - back.first) ==
                                                                         values_.size()) {  // the next row
      values_.insert(values_.end(), bytes, bytes + (last - first));
      back.last = last;
      return;
    }
    if (back.write && back.epoch == epoch_ && back.first <= first && last <= back.last) {  // rewritten
      std::copy(bytes, bytes + (last - first), values_.begin() + static_cast<ptrdiff_t>(back.data + first - back.first));
      return;
    }
  }
  if (Full()) return;
  ranges_.push_back({first, last, values_.size(), epoch_, true});
  values_.insert(values_.end(), bytes, bytes + (last - first));
}

pypto::expected<void, rt::FatalError> BlockRaceDetector::RunBlock(const DecodedKernel& kernel,
                                                                  const rt::KernelLaunch& launch, const Run& run) {
  const auto* local = reinterpret_cast<const rt::LocalContext*>(launch.args[rt::kLocalContextSlot]);
  if (!local || local->block_num < 2 || launch.launch_id == rt::kInvalidTaskId) return run();
  if (kernel.external_entry) return RunExternBlock(kernel, launch, *local, run);
  thread_local BlockAccesses accesses;  // reused: its memory stays with the thread
  accesses.Start(kernel, launch.args);
  t_block_accesses = &accesses;
  auto result = run();
  t_block_accesses = nullptr;
  if (!result) return result;

  std::lock_guard lock(mu_);
  Pending& pending = pending_[launch.launch_id];
  pending.blocks.resize(static_cast<size_t>(local->block_num));
  if (accesses.overflowed()) {
    pending.unchecked = true;
  } else {
    BlockLog& log = pending.blocks[static_cast<size_t>(local->block_idx)];
    log.ranges = MergeRanges(std::move(accesses.ranges()));
    log.values = std::move(accesses.values());
  }
  return Returned(kernel, launch, *local, pending);
}

pypto::expected<void, rt::FatalError> BlockRaceDetector::RunExternBlock(const DecodedKernel& kernel,
                                                                        const rt::KernelLaunch& launch,
                                                                        const rt::LocalContext& local,
                                                                        const Run& run) {
  const bool affordable = TensorViewBytes(kernel, launch.args) <= kMaxSnapshotBytes;
  std::unique_lock lock(mu_);
  Pending& pending = pending_[launch.launch_id];  // a map node: stays put until the last block erases it
  if (!affordable) pending.unchecked = true;
  const bool watched = turns_.Take(lock, pending.turn_taken, pending.unchecked);
  lock.unlock();

  TensorBytes before;
  if (watched) before = SnapshotTensors(kernel, launch.args);
  auto result = run();
  TensorChanges changes;
  if (watched && result) changes = ChangedTensors(kernel, launch.args, before);

  lock.lock();
  if (watched) turns_.Give(pending.turn_taken);
  if (!result) return result;
  if (!pending.unchecked) {
    // Its turn is over, but the bytes it changed hold its values until a later block's turn.
    pending.blocks.resize(static_cast<size_t>(local.block_num));
    BlockLog& log = pending.blocks[static_cast<size_t>(local.block_idx)];
    for (const auto& slot : changes) {
      for (const rt::ByteRange& range : slot) {
        log.ranges.push_back({range.first, range.last, log.values.size(), 0, true});
        const auto* bytes = reinterpret_cast<const std::byte*>(range.first);
        log.values.insert(log.values.end(), bytes, bytes + (range.last - range.first));
      }
    }
  }
  return Returned(kernel, launch, local, pending);
}

pypto::expected<void, rt::FatalError> BlockRaceDetector::Returned(const DecodedKernel& kernel,
                                                                  const rt::KernelLaunch& launch,
                                                                  const rt::LocalContext& local, Pending& pending) {
  if (++pending.returned < local.block_num) return {};
  auto race = pending.unchecked ? std::nullopt : FirstRace(kernel, launch, pending);
  pending_.erase(launch.launch_id);
  if (race) return pypto::unexpected(rt::FatalError{rt::FatalCode::KernelFailed, *race});
  return {};
}

std::optional<Overlap> FirstUnorderedOverlap(std::vector<SweptAccess> all, const AccessOrder& ordered) {
  if (std::ranges::none_of(all, &SweptAccess::write)) return std::nullopt;
  std::ranges::sort(all, [](const SweptAccess& a, const SweptAccess& b) {
    return a.first != b.first ? a.first < b.first : a.rank < b.rank;
  });
  std::vector<SweptAccess> open;
  for (const SweptAccess& next : all) {
    std::erase_if(open, [&](const SweptAccess& a) { return a.last <= next.first; });
    for (const SweptAccess& earlier : open) {
      if (earlier.owner == next.owner || !(earlier.write || next.write) || ordered(earlier, next)) continue;
      const uint64_t first = std::max(earlier.first, next.first), last = std::min(earlier.last, next.last);
      // Two writes of the same values give the same result in either order.
      if (earlier.write && next.write &&
          std::memcmp(earlier.values + (first - earlier.first), next.values + (first - next.first), last - first) == 0)
        continue;
      return Overlap{earlier.write ? earlier : next, earlier.write ? next : earlier, first, last};
    }
    open.push_back(next);
  }
  return std::nullopt;
}

// The first pair from two blocks, one of them a write, that overlap in one epoch (a syncall between
// them orders two accesses).
std::optional<std::string> BlockRaceDetector::FirstRace(const DecodedKernel& kernel, const rt::KernelLaunch& launch,
                                                        const Pending& pending) {
  std::vector<SweptAccess> all;
  for (size_t block = 0; block < pending.blocks.size(); ++block) {
    const BlockLog& log = pending.blocks[block];
    const auto id = static_cast<uint32_t>(block);
    for (const auto& range : log.ranges)
      all.push_back({range.first, range.last, range.write ? log.values.data() + range.data : nullptr, range.epoch, id,
                     id, range.write});
  }
  const auto race = FirstUnorderedOverlap(
      std::move(all), [](const SweptAccess& a, const SweptAccess& b) { return a.epoch != b.epoch; });
  if (!race) return std::nullopt;
  const RacedRegion region = RegionOf(kernel, launch.args, race->first, race->last);
  const std::string& name = region.tensor;
  const SweptAccess &writer = race->writer, &other = race->other;
  const uint32_t a = std::min(writer.owner, other.owner), b = std::max(writer.owner, other.owner);
  const std::string what =
      other.write ? fmt::format("blocks {} and {} both wrote tensor {}", a, b, name)
                  : fmt::format("block {} wrote tensor {} where block {} read it", writer.owner, name, other.owner);
  return fmt::format(
      "data race between the blocks of one launch: in the launch of kernel '{}' (task {}), {}, within elements "
      "[{}, {}) of its buffer. The blocks of a launch run side by side in no set order: each block must write "
      "its own part, chosen by its block index, and read only what no other block of the launch writes (hand "
      "a result to other blocks through a later launch)",
      kernel.name, launch.launch_id, what, region.first, region.last);
}

void BlockRaceDetector::Clear() {
  std::lock_guard lock(mu_);
  pending_.clear();
}

}  // namespace pypto::sim
