#include "lane_race.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace pypto::sim {
namespace {

const rt::ChipTensor& TensorAt(const int64_t* args, uint32_t slot) {
  return *reinterpret_cast<const rt::ChipTensor*>(args[slot]);
}

}  // namespace

std::optional<std::string> LaneRaceDetector::Overlap(const DecodedKernel& kernel, const rt::KernelLaunch& launch,
                                                     const LaneWrites& lane0, const LaneWrites& lane1) {
  for (uint32_t slot = 0; slot < kernel.tensor_count; ++slot) {
    // The span of every byte both lanes wrote in this tensor.
    rt::ByteRange both{UINT64_MAX, 0};
    for (const rt::ByteRange& a : lane0[slot])
      for (const rt::ByteRange& b : lane1[slot])
        if (a.overlaps(b)) both = {std::min({both.first, a.first, b.first}), std::max({both.last, a.last, b.last})};
    if (both.empty()) continue;
    const rt::ChipTensor& tensor = TensorAt(launch.args, slot);
    const uint64_t element = std::max<uint64_t>(1, rt::ElementSize(tensor.dtype));
    std::string name = fmt::format("args[{}]", slot);
    for (const auto& param : kernel.params)
      if (param.is_tensor && param.slot == slot) name = fmt::format("'{}' (args[{}])", param.name, slot);
    const auto* local = reinterpret_cast<const rt::LocalContext*>(launch.args[rt::kLocalContextSlot]);
    return fmt::format(
        "data race under dual AIV dispatch: lanes 0 and 1 of kernel '{}' (block {}) both wrote tensor {}, within "
        "elements [{}, {}) of its buffer; each lane must write its own part, chosen by get_sub_block_id(args)",
        kernel.name, local ? local->block_idx : 0, name, (both.first - tensor.buffer_addr) / element,
        (both.last - tensor.buffer_addr + element - 1) / element);
  }
  return std::nullopt;
}

pypto::expected<void, rt::FatalError> LaneRaceDetector::RunLane(const DecodedKernel& kernel,
                                                                const rt::KernelLaunch& launch, const Run& run) {
  const auto* global = reinterpret_cast<const rt::GlobalContext*>(launch.args[rt::kGlobalContextSlot]);
  const int lane = global && global->sub_block_id == 1 ? 1 : 0;
  std::unique_lock lock(mu_);
  Pending& pending = pending_[launch.mixed_group];  // a map node: stays put until the second lane erases it
  const bool watched = turns_.Take(lock, turn_taken_, pending.unchecked);
  lock.unlock();

  TensorBytes before;
  if (watched) before = SnapshotTensors(kernel, launch.args);
  auto result = run();
  LaneWrites writes;
  if (watched && result) writes = ChangedTensors(kernel, launch.args, before);

  lock.lock();
  if (watched) turns_.Give(turn_taken_);
  pending.lanes[lane] = std::move(writes);
  if (++pending.returned < 2) return result;
  std::optional<std::string> race;
  if (result && !pending.unchecked && pending.lanes[0] && pending.lanes[1])
    race = Overlap(kernel, launch, *pending.lanes[0], *pending.lanes[1]);
  pending_.erase(launch.mixed_group);
  if (!result) return result;
  if (race) return pypto::unexpected(rt::FatalError{rt::FatalCode::KernelFailed, *race});
  return {};
}

void LaneRaceDetector::Clear() {
  std::lock_guard lock(mu_);
  pending_.clear();
}

}  // namespace pypto::sim
