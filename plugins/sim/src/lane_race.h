// Under dual AIV dispatch both lanes of a block get the same args[]; the kernel must split its writes
// by get_sub_block_id(args). On a device two lanes writing the same bytes is a silent data race. Here
// the lanes of a block run one at a time, the bytes each changed in its tensors are recorded
// (tensor_changes.h), and bytes both lanes changed fail the run, naming the kernel, block, tensor
// and elements.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "pypto/runtime/chip_tensor.h"
#include "pypto/runtime/runtime.h"
#include "pypto/support/expected.h"
#include "sim_kernel.h"
#include "tensor_changes.h"

namespace pypto::sim {

class LaneRaceDetector {
 public:
  using Run = std::function<pypto::expected<void, rt::FatalError>()>;

  // Runs one lane of a dual-dispatched kernel (`launch.mixed_group` names its block) through `run`.
  pypto::expected<void, rt::FatalError> RunLane(const DecodedKernel& kernel, const rt::KernelLaunch& launch,
                                                const Run& run);

  // Forgets lanes whose partner never ran (a run that failed); between runs, when no task runs.
  void Clear();

 private:
  // The byte ranges one lane changed, per tensor slot.
  using LaneWrites = TensorChanges;

  static std::optional<std::string> Overlap(const DecodedKernel& kernel, const rt::KernelLaunch& launch,
                                            const LaneWrites& lane0, const LaneWrites& lane1);

  std::mutex one_lane_at_a_time_;
  std::mutex mu_;  // guards pending_
  std::map<rt::TaskId, std::array<std::optional<LaneWrites>, 2>> pending_;  // by mixed group
};

}  // namespace pypto::sim
