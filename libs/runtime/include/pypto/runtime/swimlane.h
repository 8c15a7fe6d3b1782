// The chip swimlane: when each task ran on which logical core. Written raw
// (chip_swimlane_records.json) and as a Chrome trace (merged_swimlane.json) that Perfetto opens.
#pragma once

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "pypto/runtime/task_observer.h"
#include "pypto/support/expected.h"

namespace pypto::rt {

struct SwimlaneRecord {
  int core_id = 0;  // chip-wide: AIC cores first, then AIV cores
  CoreType core_type = CoreType::AIV;
  int core_index = 0;  // within its core type: the track "AIV 3"
  TaskId task_id = kInvalidTaskId;
  int32_t func_id = -1;
  int64_t start_ns = 0;  // since the run started
  int64_t end_ns = 0;
  // Staged on its core by early resolve at this time (before start_ns), waiting for its producers;
  // -1 when it was dispatched normally.
  int64_t staged_ns = -1;
};

class SwimlaneRecorder final : public TaskObserver {
 public:
  // `level` is RunConfig's enable_chip_swimlane (1..4); `kernel_names` is indexed by func_id.
  SwimlaneRecorder(int level, std::vector<std::string> kernel_names, int aic_cores, int aiv_cores);

  void BeforeDispatch(const ObservedTask&) override {}
  void AfterCompletion(const ObservedTask& task) override;

  // A new run starts now: records are forgotten and times count from here.
  void Clear();
  // Ordered by start time, then core.
  std::vector<SwimlaneRecord> Records() const;
  // Writes <dir>/chip_swimlane_records.json and <dir>/merged_swimlane.json.
  pypto::expected<void, std::string> Write(const std::filesystem::path& dir) const;

 private:
  std::string KernelName(int32_t func_id) const;

  const int level_;
  const std::vector<std::string> kernel_names_;
  const int aic_cores_, aiv_cores_;
  mutable std::mutex mu_;
  int64_t origin_ns_;
  std::vector<SwimlaneRecord> records_;
};

}  // namespace pypto::rt
