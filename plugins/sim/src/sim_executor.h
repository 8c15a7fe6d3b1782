// The simulator's CoreExecutor: runs decoded kernels on the per-core arenas. Global accesses honour
// each tensor descriptor's start_offset and strides and are checked against its buffer.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "block_race.h"
#include "core_memory.h"
#include "pypto/runtime/runtime.h"
#include "kernel_abort.h"
#include "lane_race.h"
#include "mixed_race.h"
#include "sim_kernel.h"

namespace pypto::sim {

class SimExecutor final : public rt::CoreExecutor {
 public:
  // `kernels` carry their func_id; launches of any other func_id fail.
  SimExecutor(const ir::SocSpec& soc, std::vector<DecodedKernel> kernels, int aic_cores, int aiv_cores);

  pypto::expected<void, rt::FatalError> Execute(const rt::KernelLaunch& launch) override;
  void Abort(const rt::KernelLaunch& launch) override;
  std::string KernelName(int32_t func_id) const override;
  std::optional<uint64_t> ProgressMark(const rt::KernelLaunch& launch) override;

  // Zeroes what the last run left in the cores' buffers, so that the next run starts as on a fresh
  // executor. The arenas stay allocated. Only while no task runs.
  void ScrubMemory() {
    memory_.Scrub();
    lane_races_.Clear();
    block_races_.Clear();
    mixed_races_.Clear();
  }

  // The decoded kernels, for a session that checks another plan against them and notes its mixed
  // tasks on them (NoteMixedTasks). Only while no task runs.
  std::vector<DecodedKernel>& kernels() { return kernels_; }

  // Runs `kernel` once: args[] as the launch passes them, memory of the core it runs on. `launch`
  // (its barrier) serves the kernel's syncalls; without one, only a launch of one block may reach one.
  // With `abort`, the kernel gives up at a backward branch once its task is aborted.
  static pypto::expected<void, rt::FatalError> Run(const DecodedKernel& kernel, const int64_t* args,
                                                   CoreMemory& memory, const rt::KernelLaunch* launch = nullptr,
                                                   const KernelAbort* abort = nullptr);

 private:
  std::vector<DecodedKernel> kernels_;
  std::vector<int32_t> by_func_id_;  // index into kernels_, or -1
  CoreMemoryPool memory_;
  size_t AbortSlot(const rt::KernelLaunch& launch) const {
    return static_cast<size_t>(launch.core_index + (launch.core_type == rt::CoreType::AIV ? aic_cores_ : 0));
  }
  std::deque<KernelAbort> aborts_;  // per core: AIC cores, then AIV cores
  int aic_cores_ = 0;
  LaneRaceDetector lane_races_;  // for hand-written kernels dispatched on both AIV lanes
  BlockRaceDetector block_races_;  // for the blocks of AIC and AIV launches
  MixedRaceDetector mixed_races_;  // for the members of a block of a mixed task
};

}  // namespace pypto::sim
