// Under dual AIV dispatch both lanes of a block get the same args[]; the kernel must split its writes
// by get_sub_block_id(args). On a device two lanes writing the same bytes is a silent data race. Here
// the lanes of a block run one at a time, the bytes each changed in its tensors are recorded
// (tensor_changes.h), and bytes both lanes changed fail the run, naming the kernel, block, tensor
// and elements. A lane that waits TurnTaking::kTurnWait for its turn means the lane holding it waits
// for another member of its block (a cross-core flag the other lane or the cube raises only after this
// lane ran): that block then goes unchecked and its lanes run side by side, as the device runs them.
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
#include "turn_taking.h"

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

  // One block's lanes: what each changed, and whether the block goes unchecked.
  struct Pending {
    std::array<std::optional<LaneWrites>, 2> lanes;
    bool unchecked = false;
    int returned = 0;
  };

  std::mutex mu_;  // guards the turn and pending_
  TurnTaking turns_;
  bool turn_taken_ = false;  // a watched lane runs: one at a time, so that its snapshot sees its writes only
  std::map<rt::TaskId, Pending> pending_;  // by mixed group
};

}  // namespace pypto::sim
