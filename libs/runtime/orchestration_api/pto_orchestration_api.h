// The runtime API generated orchestration C++ (orchestration/<fn>.cpp of a build directory) is written
// against, with upstream's names and spellings, implemented for the host on pypto's rt::Runtime. With
// it, that file compiles with the host compiler into a shared object that rt::RunCompiledOrchestration
// runs on the runtime the simulator's task plan also drives, so the two paths can be compared. What
// pypto's code generator emits is provided, plus explicit dependencies, dummy tasks and manual scopes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "pypto/runtime/chip_tensor.h"
#include "pypto/runtime/runtime.h"
#include "pypto/runtime/task_args.h"

// The tensor descriptor, with the runtime's reshape.
struct ChipTensor : pypto::rt::ChipTensor {
  ChipTensor() = default;
  ChipTensor(const pypto::rt::ChipTensor& raw) : pypto::rt::ChipTensor(raw) {}  // NOLINT: implicit by design
  ChipTensor reshape(const uint32_t* shapes, uint32_t ndims) const {
    return pypto::rt::ReshapedTensor(*this, std::span<const uint32_t>(shapes, ndims));
  }
};

enum class DataType : uint8_t {
  FLOAT32 = PYPTO_RT_FLOAT32, FLOAT16 = PYPTO_RT_FLOAT16, INT32 = PYPTO_RT_INT32, INT16 = PYPTO_RT_INT16,
  INT8 = PYPTO_RT_INT8, UINT8 = PYPTO_RT_UINT8, BFLOAT16 = PYPTO_RT_BFLOAT16, INT64 = PYPTO_RT_INT64,
  UINT64 = PYPTO_RT_UINT64, UINT16 = PYPTO_RT_UINT16, UINT32 = PYPTO_RT_UINT32, BOOL = PYPTO_RT_BOOL,
};

// An intermediate the runtime allocates (alloc_tensors).
struct TensorCreateInfo {
  TensorCreateInfo(const uint32_t* shapes, uint32_t ndims, DataType dtype)
      : shape(shapes, shapes + ndims), dtype(static_cast<uint8_t>(dtype)) {}
  // Every element starts as `value`, of the element type (upstream's pre-fill of the buffer).
  template <typename T>
  void set_initial_value(T value) {
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof value);
    initial_bits = bits;
  }
  std::vector<uint32_t> shape;
  uint8_t dtype;
  std::optional<uint64_t> initial_bits;
};

// A task id as submits return it; PTO2TaskId::invalid() imposes no dependency.
struct PTO2TaskId {
  uint64_t raw = pypto::rt::kInvalidTaskId;
  static PTO2TaskId invalid() { return {}; }
  bool is_valid() const { return raw != pypto::rt::kInvalidTaskId; }
};

struct CoreTaskArgs : pypto::rt::TaskArgs {
  using pypto::rt::TaskArgs::set_dependencies;
  void set_dependencies(const PTO2TaskId* ids, size_t count) {
    if (!ids) return pypto::rt::TaskArgs::set_dependencies(nullptr, count);
    std::vector<pypto::rt::TaskId> raw;
    for (size_t i = 0; i < count; ++i) raw.push_back(ids[i].raw);
    pypto::rt::TaskArgs::set_dependencies(raw.data(), raw.size());
  }
  // Marks the tensor arguments added so far that are `tensor` (the same descriptor) for the args dump.
  template <typename... Tensors>
  void dump(const Tensors&... tensors) {
    (MarkDump(tensors), ...);
  }

 private:
  void MarkDump(const pypto::rt::ChipTensor& tensor) {
    for (size_t i = 0; i < this->tensors().size(); ++i)
      if (std::memcmp(&this->tensors()[i].tensor, &tensor, sizeof tensor) == 0) mark_dump(i);
  }
};
using MixedKernels = pypto::rt::MixedKernels;
inline constexpr int32_t INVALID_KERNEL_ID = pypto::rt::kNoKernel;

struct PTO2OrchestrationConfig {
  int expected_arg_count = 0;
};

// The entry's tensors: orch_args.tensor(i).ref().
class ChipTaskArgs {
 public:
  struct TensorRef {
    const ChipTensor* tensor;
    const ChipTensor& ref() const { return *tensor; }
  };
  explicit ChipTaskArgs(std::vector<ChipTensor> tensors) : tensors_(std::move(tensors)) {}
  TensorRef tensor(size_t index) const { return {&tensors_.at(index)}; }
  size_t tensor_count() const { return tensors_.size(); }

 private:
  std::vector<ChipTensor> tensors_;
};

// How the tasks of a scope get their dependencies: from their tensors and deps (AUTO), or from their
// deps only (MANUAL).
enum class PTO2ScopeMode : uint8_t { AUTO = 0, MANUAL = 1 };

namespace pto_orch {

// One run's state: the runtime it submits to, the intermediates it allocated (freed after the run),
// and the first submit that failed.
struct Run {
  pypto::rt::Runtime* runtime = nullptr;
  std::deque<std::unique_ptr<uint64_t[]>> buffers;
  std::deque<ChipTensor> tensors;
  std::optional<pypto::rt::FatalError> error;
};

inline Run& Current() {
  static Run run;
  return run;
}

inline PTO2TaskId Record(const pypto::expected<pypto::rt::TaskId, pypto::rt::FatalError>& submitted) {
  if (!submitted && !Current().error) Current().error = submitted.error();
  return submitted ? PTO2TaskId{*submitted} : PTO2TaskId::invalid();
}

// PTO2_SCOPE() / PTO2_SCOPE(PTO2ScopeMode::MANUAL): a runtime scope around the statement that follows.
class Scope {
 public:
  explicit Scope(PTO2ScopeMode mode = PTO2ScopeMode::AUTO) {
    auto begun = Current().runtime->ScopeBegin(mode == PTO2ScopeMode::MANUAL ? pypto::rt::ScopeMode::Manual
                                                                              : pypto::rt::ScopeMode::Auto);
    if (!begun && !Current().error) Current().error = begun.error();
  }
  ~Scope() { Current().runtime->ScopeEnd(); }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  bool EnterOnce() { return !std::exchange(entered_, true); }

 private:
  bool entered_ = false;
};

}  // namespace pto_orch

#define PTO2_SCOPE(...) for (::pto_orch::Scope pto2_scope_guard{__VA_ARGS__}; pto2_scope_guard.EnterOnce();)

// What a submit returns: the tensors it allocated (alloc_tensors) and its task id.
class TaskOutputTensors {
 public:
  const ChipTensor& get_ref(size_t index) const { return *tensors_.at(index); }
  PTO2TaskId task_id() const { return id_; }
  std::vector<const ChipTensor*> tensors_;
  PTO2TaskId id_;
};

// Zero-filled (or filled with their starting value), 64-byte aligned buffers that live until the run
// has finished.
template <typename... Infos>
TaskOutputTensors alloc_tensors(const Infos&... infos) {
  TaskOutputTensors outputs;
  auto allocate = [&](const TensorCreateInfo& info) {
    uint64_t elements = 1;
    for (uint32_t dim : info.shape) elements *= dim;
    const uint64_t words = (elements * pypto::rt::ElementSize(info.dtype) + 63) / 64 * 8;
    auto& run = pto_orch::Current();
    run.buffers.push_back(std::make_unique<uint64_t[]>(std::max<uint64_t>(words, 8)));
    if (info.initial_bits)
      pypto::rt::FillElements(run.buffers.back().get(), elements, pypto::rt::ElementSize(info.dtype), *info.initial_bits);
    run.tensors.push_back(pypto::rt::MakeExternalTensor(run.buffers.back().get(), info.shape, info.dtype));
    outputs.tensors_.push_back(&run.tensors.back());
  };
  (allocate(infos), ...);
  return outputs;
}

inline uint64_t to_u64(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}
inline uint64_t to_u64(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

namespace pto_orch {
inline TaskOutputTensors Submitted(PTO2TaskId id) {
  TaskOutputTensors outputs;
  outputs.id_ = id;
  return outputs;
}
}  // namespace pto_orch

inline TaskOutputTensors rt_submit_aiv_task(int32_t func_id, const CoreTaskArgs& args) {
  return pto_orch::Submitted(pto_orch::Record(pto_orch::Current().runtime->SubmitAiv(func_id, args)));
}
inline TaskOutputTensors rt_submit_aic_task(int32_t func_id, const CoreTaskArgs& args) {
  return pto_orch::Submitted(pto_orch::Record(pto_orch::Current().runtime->SubmitAic(func_id, args)));
}
inline TaskOutputTensors rt_submit_task(const MixedKernels& kernels, const CoreTaskArgs& args) {
  return pto_orch::Submitted(pto_orch::Record(pto_orch::Current().runtime->SubmitMixed(kernels, args)));
}
inline TaskOutputTensors rt_submit_dummy_task(const CoreTaskArgs& args) {
  return pto_orch::Submitted(pto_orch::Record(pto_orch::Current().runtime->SubmitDummy(args)));
}

extern "C" {
PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& orch_args);
void aicpu_orchestration_entry(const ChipTaskArgs& orch_args);

// What rt::RunCompiledOrchestration calls: runs the entry on `runtime` with the caller's tensors and
// waits. Returns 0, or the fatal code with its message in `error` (NUL-terminated, truncated).
__attribute__((visibility("default"))) int pypto_orchestration_run(pypto::rt::Runtime* runtime,
                                                                   const pypto::rt::ChipTensor* tensors,
                                                                   size_t count, char* error, size_t error_size) {
  auto fail = [&](const pypto::rt::FatalError& fatal) {
    std::snprintf(error, error_size, "%s", fatal.str().c_str());
    return static_cast<int>(fatal.code);
  };
  auto& run = pto_orch::Current();
  run = pto_orch::Run{.runtime = runtime};
  ChipTaskArgs args(std::vector<ChipTensor>(tensors, tensors + count));
  const int expected = aicpu_orchestration_config(args).expected_arg_count;
  if (expected != static_cast<int>(count))
    return fail({pypto::rt::FatalCode::InvalidArgs,
                 "the orchestration expects " + std::to_string(expected) + " tensors, got " + std::to_string(count)});
  std::optional<pypto::rt::FatalError> thrown;
  try {
    aicpu_orchestration_entry(args);
  } catch (const std::exception& e) {
    thrown = pypto::rt::FatalError{pypto::rt::FatalCode::InvalidArgs, e.what()};
  }
  auto waited = runtime->WaitAll();  // tasks already submitted may use the intermediates
  run.buffers.clear();
  run.tensors.clear();
  if (thrown) return fail(*thrown);
  if (run.error) return fail(*run.error);
  if (!waited) return fail(waited.error());
  return 0;
}
}
