// The args dump: snapshots of task arguments around each kernel, in the spirit of upstream's
// args_dump.json + args.bin. Inputs are taken before dispatch, outputs after completion, InOut at both.
#pragma once

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "pypto/runtime/task_observer.h"
#include "pypto/support/expected.h"

namespace pypto::rt {

enum class ArgsDumpLevel : int {
  Off = 0,
  Tagged = 1,       // only arguments marked for the dump (pl.dump_tag), with their payload
  All = 2,          // every argument, tensors and scalars, with payloads
  MetadataAll = 3,  // every argument's metadata; payloads of marked tensors only
};

struct ArgRecord {
  TaskId task_id = kInvalidTaskId;
  int32_t func_id = -1;
  CoreType core_type = CoreType::AIV;
  int core_index = 0;
  const char* role = "input";  // "input" | "output" | "inout"
  bool after = false;          // stage: after_completion, else before_dispatch
  size_t arg_index = 0;        // in args[]: tensors first, then scalars
  bool is_tensor = true;
  bool tagged = false;
  uint8_t dtype = 0;  // pypto_rt_dtype; scalars are recorded as UINT64 bit patterns
  std::vector<uint32_t> shape, strides;
  uint64_t start_offset = 0;
  bool is_contiguous = true;
  uint64_t scalar = 0;
  bool truncated = false;  // the view reaches past its buffer: no payload taken
  bool dropped = false;    // the payload did not fit the recorder's byte budget: metadata only
  // The view's elements in row-major order of its shape (strides applied), or the scalar's 8 bytes;
  // empty when only metadata is recorded.
  std::string payload;
};

class ArgsDumpRecorder final : public TaskObserver {
 public:
  // Payloads of one run are kept in memory until written: past `max_payload_bytes` a record keeps its
  // metadata only and counts as dropped.
  static constexpr uint64_t kDefaultMaxPayloadBytes = uint64_t{1} << 30;

  // `kernel_names` is indexed by func_id, for the manifest.
  ArgsDumpRecorder(ArgsDumpLevel level, std::vector<std::string> kernel_names,
                   uint64_t max_payload_bytes = kDefaultMaxPayloadBytes);

  void BeforeDispatch(const ObservedTask& task) override;
  void AfterCompletion(const ObservedTask& task) override;

  // Forgets what was recorded (a new run starts).
  void Clear();
  // The records so far, ordered by task, stage and argument (threads record in any order).
  std::vector<ArgRecord> Records() const;
  // Writes <dir>/args_dump.json (the manifest) and <dir>/args.bin (the payloads, back to back).
  pypto::expected<void, std::string> Write(const std::filesystem::path& dir) const;

 private:
  void Record(const ObservedTask& task, bool after);
  bool Wanted(bool tagged) const { return level_ != ArgsDumpLevel::Tagged || tagged; }
  bool WantsPayload(bool tagged) const { return level_ != ArgsDumpLevel::MetadataAll || tagged; }

  const ArgsDumpLevel level_;
  const std::vector<std::string> kernel_names_;
  const uint64_t max_payload_bytes_;
  mutable std::mutex mu_;
  std::vector<ArgRecord> records_;
  uint64_t payload_bytes_ = 0;
};

// The bytes of a tensor view's elements in row-major order of its shape; false when the view reaches
// outside its buffer.
bool CopyViewElements(const ChipTensor& tensor, std::string& out);

}  // namespace pypto::rt
