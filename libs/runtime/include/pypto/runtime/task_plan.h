// An orchestration function in executable form, produced by libpypto_codegen_orch next to the
// orchestration C++. Running it submits the same task stream the C++ would.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "pypto/runtime/dfx_options.h"
#include "pypto/runtime/runtime.h"

namespace pypto::rt {

struct PlanTensor {
  std::string name;
  uint8_t dtype = PYPTO_RT_FLOAT32;  // pypto_rt_dtype
  std::vector<uint32_t> shape;
  // An intermediate's starting value (pl.create_tensor(..., init_value=v)): v's bit pattern in the
  // element type, set in every element before any task runs. None: zeros.
  std::optional<uint64_t> initial_bits;
};

// A tensor operand: an orchestration parameter, an intermediate the runtime allocates, or a view
// of one of those (TaskPlan::views).
struct PlanTensorRef {
  enum class Kind : uint8_t { Param, Intermediate, View } kind = Kind::Param;
  uint32_t index = 0;
  bool operator==(const PlanTensorRef&) const = default;
};

// A view of a tensor: a reshape of the whole contiguous tensor (pl.reshape in orchestration, no
// offsets), the window at `offsets` of `shape` with the base's strides (pl.slice passed to a kernel),
// or the base with two axes and their strides swapped (pl.transpose, `swapped_axes`; `shape` is the
// swapped one).
struct PlanView {
  std::string name;
  PlanTensorRef base;  // a parameter, an intermediate or an earlier view
  std::vector<uint32_t> shape;
  std::vector<uint32_t> offsets;  // empty: a reshape or a transpose
  std::optional<std::pair<uint32_t, uint32_t>> swapped_axes;  // a transpose
};

struct PlanTaskArg {
  ArgDirection direction = ArgDirection::Input;
  PlanTensorRef tensor;   // unless direction is Scalar
  uint64_t scalar = 0;    // bit pattern, when direction is Scalar
  bool dump = false;      // a tensor marked for the args dump (pl.dump_tag)
};

struct PlanKernel {
  int32_t func_id = 0;
  std::string name;
  CoreType core_type = CoreType::AIV;
};

struct PlanSubmit {
  int32_t func_id = 0;
  CoreType core_type = CoreType::AIV;
  // A MixedKernels submit (a call of a Group function): its members; func_id and core_type are then
  // unused.
  std::optional<MixedKernels> mixed;
  // A dependency-only task (pl.system.task_dummy): no kernel runs; it completes once `deps` have.
  bool dummy = false;
  // A fill task (dummy too): sets every element of its output tensors to these bits once the tasks
  // still using them have finished (Runtime::SubmitFill). A pl.create_tensor(..., init_value=v) that a
  // loop runs again starts each run with one on the buffer it takes.
  std::optional<uint64_t> fill;
  // Explicit dependencies (`deps=[...]`): earlier submits of the plan, by index, that this one waits
  // for on top of those the runtime derives from the tensors.
  std::vector<uint32_t> deps;
  int32_t block_num = 1;          // an SPMD launch: this many blocks of the kernel
  bool require_sync_start = false;  // pl.spmd(..., sync_start=True): the blocks start together
  bool allow_early_resolve = false;  // allow_early_resolve=True: its consumers may be staged early
  std::vector<PlanTaskArg> args;  // tensors first, then scalars
  // Runtime scopes around it: opened just before it, closed just after it (an orchestration loop's
  // body is a scope each iteration; an iteration that submits nothing opens none).
  uint16_t scopes_opened = 0;
  uint16_t scopes_closed = 0;
  // The innermost scope it opens is a manual one (pl.manual_scope); the others are auto scopes. Nothing
  // nests in a manual scope, so only the innermost can be.
  bool opens_manual_scope = false;
};

struct TaskPlan {
  std::string orchestration_name;
  std::vector<PlanTensor> params;         // the orchestration's tensor parameters, in order
  // Given memory by RunPlan for their lifetimes: 64-byte aligned, zero-filled (see RunPlan). Upstream's
  // alloc_tensors leaves them uninitialised, so kernels must not rely on the zeros.
  std::vector<PlanTensor> intermediates;
  std::vector<PlanView> views;            // in definition order
  std::vector<PlanKernel> kernels;        // indexed by func_id
  std::vector<PlanSubmit> submits;        // in program order
  int task_window = 0;                    // RuntimeOptions::task_window for running it; 0: the default
  // RuntimeOptions::ring_heap for running it, per ring (RunConfig(ring_heap=...)); empty or 0: the default.
  std::vector<uint64_t> ring_heap;
  // RuntimeOptions::ring_dep_pool for running it, per ring (RunConfig(ring_dep_pool=...)); empty or 0: the
  // default.
  std::vector<uint32_t> ring_dep_pool;
  DfxOptions dfx;                         // debugging outputs to record while running it
};

// The memory of one plan tensor, freed with it.
using PlanTensorMemory = std::unique_ptr<void, void (*)(void*)>;

// Memory for `tensor` (the plan's intermediate #index, named in errors) as RunPlan gives an
// intermediate: 64-byte aligned, zero-filled or holding the tensor's starting value.
pypto::expected<PlanTensorMemory, FatalError> AllocatePlanTensor(const PlanTensor& tensor, size_t index);

// Checks the caller's tensors against the plan's parameters (count, dtype, shape).
pypto::expected<void, FatalError> CheckPlanParams(const TaskPlan& plan, std::span<const ChipTensor> params);

// The parameter or intermediate a tensor operand lies in, following views to their bases; nullopt
// for a reference out of range.
std::optional<PlanTensorRef> BufferRefOf(const TaskPlan& plan, PlanTensorRef ref);

// The kernels one submit runs, with their core types: one, or the members of a mixed submit.
std::vector<std::pair<int32_t, CoreType>> SubmitKernels(const PlanSubmit& submit);

// The task window to run `plan` with: its own task_window, else $PTO2_RING_TASK_WINDOW (as upstream
// reads it), else RuntimeOptions' default.
int TaskWindowFor(const TaskPlan& plan);

// The heap rings to run `plan` with: its own ring_heap where given, else $PTO2_RING_HEAP (one size for
// every ring, as upstream reads it), else RuntimeOptions' default.
std::array<uint64_t, kScopeRings> RingHeapFor(const TaskPlan& plan);

// The dependency pools to run `plan` with: its own ring_dep_pool where given, else $PTO2_RING_DEP_POOL
// (one size for every ring), else RuntimeOptions' default (upstream's 16384 entries a ring).
std::array<uint32_t, kScopeRings> RingDepPoolFor(const TaskPlan& plan);

// The stall watchdog's timeout: $SIMPLER_SCHEDULER_TIMEOUT_MS (milliseconds, at least 1) as upstream
// reads it when a worker starts, else its default of 10 s (RuntimeOptions::scheduler_timeout_ms).
int64_t SchedulerTimeoutMs();

// Submits every task of the plan, inside the scopes it marks, and waits for all of them. Each
// intermediate takes its memory from the runtime's heap rings just before the first submit that uses
// it and gives it back once the scope holding its uses has ended and those tasks are done.
pypto::expected<void, FatalError> RunPlan(const TaskPlan& plan, std::span<const ChipTensor> params, Runtime& runtime);

}  // namespace pypto::rt
