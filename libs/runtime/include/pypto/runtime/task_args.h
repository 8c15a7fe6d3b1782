// The arguments of one task: tensors first (each with a direction), then scalars as 64-bit patterns.
#pragma once

#include <bit>
#include <cstring>
#include <type_traits>
#include <cstdint>
#include <string>
#include <vector>

#include "pypto/runtime/chip_tensor.h"

namespace pypto::rt {

// How a task uses a tensor argument; drives dependency tracking.
enum class ArgDirection : uint8_t { Input, Output, InOut, OutputExisting, NoDep, Scalar };
const char* ArgDirectionName(ArgDirection direction);

struct TensorArg {
  ChipTensor tensor;  // copied: the descriptor the kernel will see
  ArgDirection direction;
  bool dump = false;  // marked for the args dump (pl.dump_tag): recorded at levels 1 and 3
};

// How many blocks one submit launches (upstream's launch_spec): block b of N sees block_idx b and
// block_num N in its local context (args[kLocalContextSlot]).
// require_sync_start (upstream's sync_start): the blocks start only once every one of them holds a
// core, all at the same moment, so that a kernel may wait at an all-block barrier (a hard syncall)
// without a block still queued behind it. It needs block_num <= the cores of the launch's type.
struct LaunchSpec {
  int32_t block_num = 1;
  bool require_sync_start = false;
  void set_block_num(int32_t n) { block_num = n; }
  void set_require_sync_start(bool required) { require_sync_start = required; }
};

class TaskArgs {
 public:
  LaunchSpec launch_spec;

  static constexpr size_t kMaxTensors = 32;
  static constexpr size_t kMaxScalars = 16;

  void add_input(const ChipTensor& tensor) { AddTensor(tensor, ArgDirection::Input); }
  // Writes into an existing tensor (OUTPUT_EXISTING).
  void add_output(const ChipTensor& tensor) { AddTensor(tensor, ArgDirection::OutputExisting); }
  void add_inout(const ChipTensor& tensor) { AddTensor(tensor, ArgDirection::InOut); }
  void add_no_dep(const ChipTensor& tensor) { AddTensor(tensor, ArgDirection::NoDep); }
  void add_tensor(const ChipTensor& tensor, ArgDirection direction) { AddTensor(tensor, direction); }
  void add_scalar(uint64_t bits);
  template <typename T>
    requires(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>)
  void add_scalar_value(T value) {
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    add_scalar(bits);
  }

  // Marks tensor argument `index` (in the order added) for the args dump, as upstream's Arg::dump.
  void mark_dump(size_t index);

  // Explicit dependencies: this task also waits for these tasks (as returned by a submit). An id
  // of a task that has finished, or kInvalidTaskId, imposes nothing. Replaces earlier ones.
  void set_dependencies(const TaskId* ids, size_t count);
  const std::vector<TaskId>& dependencies() const { return dependencies_; }

  // Early resolve (upstream's set_allow_early_resolve, set on a producer): a task whose unfinished
  // producers all allow it, and have all started, may be staged on an idle core before they finish,
  // and then starts on that core the moment the last of them does. It changes when a task starts,
  // never what it computes.
  void set_allow_early_resolve(bool allowed) { allow_early_resolve_ = allowed; }
  bool allow_early_resolve() const { return allow_early_resolve_; }

  const std::vector<TensorArg>& tensors() const { return tensors_; }
  const std::vector<uint64_t>& scalars() const { return scalars_; }
  // Errors are latched (the first one wins) and refused at submit, as on the device.
  bool has_error() const { return !error_.empty(); }
  const std::string& error() const { return error_; }

 private:
  void AddTensor(const ChipTensor& tensor, ArgDirection direction);
  std::vector<TensorArg> tensors_;
  std::vector<uint64_t> scalars_;
  std::vector<TaskId> dependencies_;
  bool allow_early_resolve_ = false;
  std::string error_;
};

}  // namespace pypto::rt
