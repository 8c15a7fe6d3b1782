// Running a task plan: check the caller's tensors, submit every task in program order, giving each
// intermediate memory from the runtime's heap rings for its lifetime only, and wait.
#include "pypto/runtime/task_plan.h"

#include "plan_lifetimes.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>

namespace pypto::rt {

namespace {

std::string ShapeString(std::span<const uint32_t> shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

std::span<const uint32_t> ShapeOf(const ChipTensor& tensor) {
  return {tensor.shapes, tensor.ndims <= PYPTO_MAX_TENSOR_DIMS ? tensor.ndims : PYPTO_MAX_TENSOR_DIMS};
}

pypto::unexpected<FatalError> InvalidArgs(std::string message) {
  return pypto::unexpected(FatalError{FatalCode::InvalidArgs, std::move(message)});
}

}  // namespace

namespace {

// The bytes of intermediate #index, or InvalidArgs when its shape or dtype is not a tensor's.
pypto::expected<uint64_t, FatalError> PlanTensorBytes(const PlanTensor& tensor, size_t index) {
  const size_t element_size = ElementSize(tensor.dtype);
  if (tensor.shape.empty() || tensor.shape.size() > PYPTO_MAX_TENSOR_DIMS || element_size == 0)
    return InvalidArgs(fmt::format("intermediate {} ('{}'): shape {} {} is not a valid tensor", index, tensor.name,
                                   ShapeString(tensor.shape), DtypeName(tensor.dtype)));
  uint64_t bytes = element_size;
  for (uint32_t extent : tensor.shape) bytes *= extent;
  return bytes;
}

// Sets the tensor's starting value (pl.create_tensor(..., init_value=v)) in its zeroed memory.
void FillStartingValue(void* memory, const PlanTensor& tensor, uint64_t bytes) {
  const size_t element_size = ElementSize(tensor.dtype);
  if (tensor.initial_bits) FillElements(memory, bytes / element_size, element_size, *tensor.initial_bits);
}

// $variable as an integer of at least `least`, or nullopt (with a warning when it is set but is not one).
template <typename T>
std::optional<T> EnvAtLeast(const char* variable, T least) {
  const char* env = std::getenv(variable);
  if (!env || !*env) return std::nullopt;
  T value{};
  const char* end = env + std::strlen(env);
  if (auto [ptr, ec] = std::from_chars(env, end, value); ec != std::errc{} || ptr != end || value < least) {
    spdlog::warn("ignoring {}='{}': not an integer of at least {}", variable, env, least);
    return std::nullopt;
  }
  return value;
}

}  // namespace

// Kernels may use aligned vector loads on intermediates, so they get cache-line alignment. Zero-filled
// so that a kernel reading a region nobody wrote sees the same values on every run, or filled with the
// tensor's starting value when it has one.
pypto::expected<PlanTensorMemory, FatalError> AllocatePlanTensor(const PlanTensor& tensor, size_t index) {
  constexpr size_t kAlignment = 64;
  auto bytes = PlanTensorBytes(tensor, index);
  if (!bytes) return pypto::unexpected(std::move(bytes.error()));
  // aligned_alloc wants a multiple of the alignment, and at least one block keeps the address unique.
  const size_t rounded = std::max(kAlignment, (*bytes + kAlignment - 1) / kAlignment * kAlignment);
  PlanTensorMemory buffer(std::aligned_alloc(kAlignment, rounded), [](void* memory) { std::free(memory); });
  if (!buffer)
    return pypto::unexpected(FatalError{
        FatalCode::OutOfMemory, fmt::format("cannot allocate {} bytes for intermediate '{}'", *bytes, tensor.name)});
  std::memset(buffer.get(), 0, rounded);
  FillStartingValue(buffer.get(), tensor, *bytes);
  return buffer;
}

namespace {

// The TaskArgs of one submit, with tensor references resolved against the run's tensors.
// The tensors a run's plan refers to, by PlanTensorRef::Kind.
struct RunTensors {
  std::span<const ChipTensor> params, intermediates, views;
  std::span<const ChipTensor> Pool(PlanTensorRef::Kind kind) const {
    return kind == PlanTensorRef::Kind::Param ? params : kind == PlanTensorRef::Kind::Intermediate ? intermediates
                                                                                                  : views;
  }
};

const char* KindName(PlanTensorRef::Kind kind) {
  return kind == PlanTensorRef::Kind::Param ? "parameter" : kind == PlanTensorRef::Kind::Intermediate ? "intermediate"
                                                                                                     : "view";
}

// The plan's views over this run's tensors, each from its base (which may be an earlier view).
pypto::expected<std::vector<ChipTensor>, FatalError> BuildViews(const TaskPlan& plan, RunTensors tensors) {
  std::vector<ChipTensor> views;
  views.reserve(plan.views.size());
  for (size_t i = 0; i < plan.views.size(); ++i) {
    const PlanView& view = plan.views[i];
    tensors.views = views;
    std::span<const ChipTensor> pool = tensors.Pool(view.base.kind);
    if (view.base.index >= pool.size())
      return InvalidArgs(fmt::format("view '{}' is of {} {}, which is not defined before it", view.name,
                                     KindName(view.base.kind), view.base.index));
    try {
      const ChipTensor& base = pool[view.base.index];
      views.push_back(view.swapped_axes ? TransposedTensor(base, view.swapped_axes->first, view.swapped_axes->second)
                      : view.offsets.empty() ? ReshapedTensor(base, view.shape)
                                             : SlicedTensor(base, view.shape, view.offsets));
    } catch (const std::invalid_argument& error) {
      return InvalidArgs(fmt::format("view '{}': {}", view.name, error.what()));
    }
  }
  return views;
}

pypto::expected<TaskArgs, FatalError> BuildArgs(const PlanSubmit& submit, size_t submit_index,
                                                const RunTensors& tensors) {
  TaskArgs args;
  args.launch_spec.set_block_num(submit.block_num);
  args.launch_spec.set_require_sync_start(submit.require_sync_start);
  args.set_allow_early_resolve(submit.allow_early_resolve);
  for (size_t i = 0; i < submit.args.size(); ++i) {
    const PlanTaskArg& arg = submit.args[i];
    if (arg.direction == ArgDirection::Scalar) {
      args.add_scalar(arg.scalar);
      continue;
    }
    std::span<const ChipTensor> pool = tensors.Pool(arg.tensor.kind);
    if (arg.tensor.index >= pool.size())
      return InvalidArgs(fmt::format("submit {}: argument {} refers to {} {}, but the plan has {}", submit_index, i,
                                     KindName(arg.tensor.kind), arg.tensor.index, pool.size()));
    args.add_tensor(pool[arg.tensor.index], arg.direction);
    if (arg.dump) args.mark_dump(args.tensors().size() - 1);
  }
  return args;
}

// The ids of the earlier submits that submit #i names in its `deps`.
pypto::expected<TaskArgs, FatalError> WithDependencies(TaskArgs args, const PlanSubmit& submit, size_t submit_index,
                                                       std::span<const TaskId> earlier) {
  if (submit.deps.empty()) return args;
  std::vector<TaskId> ids;
  for (uint32_t dep : submit.deps) {
    if (dep >= earlier.size())
      return InvalidArgs(fmt::format("submit {} depends on submit {}, which is not an earlier one", submit_index, dep));
    ids.push_back(earlier[dep]);
  }
  args.set_dependencies(ids.data(), ids.size());
  return args;
}

}  // namespace

pypto::expected<void, FatalError> CheckPlanParams(const TaskPlan& plan, std::span<const ChipTensor> params) {
  if (params.size() != plan.params.size())
    return InvalidArgs(fmt::format("expected {} tensor arguments, got {}", plan.params.size(), params.size()));
  for (size_t i = 0; i < params.size(); ++i) {
    const PlanTensor& expected = plan.params[i];
    const ChipTensor& actual = params[i];
    const std::span<const uint32_t> actual_shape = ShapeOf(actual);
    // codegen-orch writes a dynamic axis (ir::kDynamicExtent, a program compiled for every extent)
    // as UINT32_MAX: any extent is accepted there; the orchestration reads it from the tensor.
    const bool same_shape = std::ranges::equal(actual_shape, expected.shape, [](uint32_t got, uint32_t want) {
      return want == std::numeric_limits<uint32_t>::max() || got == want;
    });
    if (!same_shape || actual.dtype != expected.dtype)
      return InvalidArgs(fmt::format("argument {} ('{}'): expected shape {} {}, got {} {}", i, expected.name,
                                     ShapeString(expected.shape), DtypeName(expected.dtype),
                                     ShapeString(actual_shape), DtypeName(actual.dtype)));
  }
  return {};
}

std::optional<PlanTensorRef> BufferRefOf(const TaskPlan& plan, PlanTensorRef ref) {
  // A view's base is defined before it, so following bases always ends.
  while (ref.kind == PlanTensorRef::Kind::View) {
    if (ref.index >= plan.views.size()) return std::nullopt;
    const PlanTensorRef base = plan.views[ref.index].base;
    if (base.kind == PlanTensorRef::Kind::View && base.index >= ref.index) return std::nullopt;
    ref = base;
  }
  const auto& list = ref.kind == PlanTensorRef::Kind::Param ? plan.params : plan.intermediates;
  if (ref.index >= list.size()) return std::nullopt;
  return ref;
}

std::vector<std::pair<int32_t, CoreType>> SubmitKernels(const PlanSubmit& submit) {
  if (submit.dummy) return {};
  if (!submit.mixed) return {{submit.func_id, submit.core_type}};
  std::vector<std::pair<int32_t, CoreType>> kernels;
  if (submit.mixed->aic != kNoKernel) kernels.emplace_back(submit.mixed->aic, CoreType::AIC);
  for (int32_t aiv : {submit.mixed->aiv0, submit.mixed->aiv1})
    if (aiv != kNoKernel) kernels.emplace_back(aiv, CoreType::AIV);
  return kernels;
}

int TaskWindowFor(const TaskPlan& plan) {
  if (plan.task_window > 0) return plan.task_window;
  return EnvAtLeast("PTO2_RING_TASK_WINDOW", 2).value_or(RuntimeOptions{}.task_window);
}

int64_t SchedulerTimeoutMs() {
  return EnvAtLeast<int64_t>("SIMPLER_SCHEDULER_TIMEOUT_MS", 1).value_or(kDefaultSchedulerTimeoutMs);
}

std::array<uint64_t, kScopeRings> RingHeapFor(const TaskPlan& plan) {
  std::array<uint64_t, kScopeRings> heap = RuntimeOptions{}.ring_heap;
  if (auto bytes = EnvAtLeast<uint64_t>("PTO2_RING_HEAP", 1024)) heap.fill(*bytes);
  for (size_t ring = 0; ring < kScopeRings && ring < plan.ring_heap.size(); ++ring)
    if (plan.ring_heap[ring] > 0) heap[ring] = plan.ring_heap[ring];
  return heap;
}

std::array<uint32_t, kScopeRings> RingDepPoolFor(const TaskPlan& plan) {
  std::array<uint32_t, kScopeRings> pool = RuntimeOptions{}.ring_dep_pool;
  if (auto entries = EnvAtLeast<uint32_t>("PTO2_RING_DEP_POOL", 4)) pool.fill(*entries);
  for (size_t ring = 0; ring < kScopeRings && ring < plan.ring_dep_pool.size(); ++ring)
    if (plan.ring_dep_pool[ring] > 0) pool[ring] = plan.ring_dep_pool[ring];
  return pool;
}

namespace {

// The intermediates of one run, each taking its memory from the runtime's heap rings only for its
// lifetime (plan_lifetimes.h): allocated just before the first submit that uses it, given back once
// its scope has ended and the tasks that used it are done.
class RunIntermediates {
 public:
  RunIntermediates(const TaskPlan& plan, Runtime& runtime)
      : plan_(plan), runtime_(runtime), lifetimes_(IntermediateLifetimes(plan)), blocks_(lifetimes_.size()),
        users_(lifetimes_.size()), views_of_(lifetimes_.size()), allocate_before_(plan.submits.size()),
        release_after_(plan.submits.size()) {
    for (uint32_t v = 0; v < plan.views.size(); ++v) {
      std::optional<PlanTensorRef> root = BufferRefOf(plan, {PlanTensorRef::Kind::View, v});
      if (root && root->kind == PlanTensorRef::Kind::Intermediate) views_of_[root->index].push_back(v);
    }
    for (uint32_t i = 0; i < lifetimes_.size(); ++i) {
      if (!lifetimes_[i].used) continue;
      allocate_before_[lifetimes_[i].first_submit].push_back(i);
      release_after_[lifetimes_[i].release_after].push_back(i);
    }
  }
  ~RunIntermediates() { ReleaseAll(); }

  // Descriptors without memory yet, so that views can be checked before anything runs.
  pypto::expected<void, FatalError> Describe() {
    tensors_.reserve(plan_.intermediates.size());
    bytes_.reserve(plan_.intermediates.size());
    for (size_t i = 0; i < plan_.intermediates.size(); ++i) {
      const PlanTensor& tensor = plan_.intermediates[i];
      auto bytes = PlanTensorBytes(tensor, i);
      if (!bytes) return pypto::unexpected(std::move(bytes.error()));
      bytes_.push_back(*bytes);
      tensors_.push_back(MakeExternalTensor(nullptr, tensor.shape, tensor.dtype));
    }
    return {};
  }

  // Gives the intermediates that submit #s is the first to use their memory, and points the views of
  // them at it.
  pypto::expected<void, FatalError> AllocateFor(size_t s, std::span<ChipTensor> views) {
    for (uint32_t i : allocate_before_[s]) {
      const PlanTensor& tensor = plan_.intermediates[i];
      auto block = runtime_.HeapAllocate(bytes_[i], lifetimes_[i].ring, fmt::format("intermediate '{}'", tensor.name));
      if (!block) return pypto::unexpected(std::move(block.error()));
      blocks_[i] = *block;
      FillStartingValue(block->memory, tensor, bytes_[i]);
      const uint64_t address = reinterpret_cast<uint64_t>(block->memory);
      tensors_[i].buffer_addr = address;
      for (uint32_t v : views_of_[i]) views[v].buffer_addr = address;
    }
    return {};
  }

  // Records that task `id` (submit #s) uses the intermediates it names, and gives back those whose
  // scope ends with it.
  void Submitted(size_t s, TaskId id) {
    for (const PlanTaskArg& arg : plan_.submits[s].args) {
      if (arg.direction == ArgDirection::Scalar) continue;
      std::optional<PlanTensorRef> root = BufferRefOf(plan_, arg.tensor);
      if (root && root->kind == PlanTensorRef::Kind::Intermediate) users_[root->index].push_back(id);
    }
    for (uint32_t i : release_after_[s]) Release(i);
  }

  void ReleaseAll() {
    for (size_t i = 0; i < blocks_.size(); ++i) Release(i);
  }

  std::span<const ChipTensor> tensors() const { return tensors_; }

 private:
  void Release(size_t i) {
    if (!blocks_[i].memory) return;
    runtime_.HeapRelease(blocks_[i], users_[i]);
    blocks_[i] = {};
    users_[i].clear();
  }

  const TaskPlan& plan_;
  Runtime& runtime_;
  std::vector<IntermediateLifetime> lifetimes_;
  std::vector<HeapBlock> blocks_;
  std::vector<std::vector<TaskId>> users_;
  std::vector<std::vector<uint32_t>> views_of_;  // by intermediate: the views of it, at any depth
  std::vector<std::vector<uint32_t>> allocate_before_, release_after_;
  std::vector<ChipTensor> tensors_;
  std::vector<uint64_t> bytes_;  // by intermediate, from Describe
};

}  // namespace

pypto::expected<void, FatalError> RunPlan(const TaskPlan& plan, std::span<const ChipTensor> params, Runtime& runtime) {
  if (auto checked = CheckPlanParams(plan, params); !checked) return checked;

  RunIntermediates intermediates(plan, runtime);
  if (auto described = intermediates.Describe(); !described) return described;
  auto views = BuildViews(plan, RunTensors{params, intermediates.tensors(), {}});
  if (!views) return pypto::unexpected(std::move(views.error()));
  const RunTensors tensors{params, intermediates.tensors(), *views};

  // Stop at the first refused submit, but always wait: tasks already submitted may use the buffers.
  pypto::expected<void, FatalError> submitted;
  std::vector<TaskId> ids;  // of each submit so far, for the explicit dependencies of later ones
  ids.reserve(plan.submits.size());
  for (size_t i = 0; i < plan.submits.size() && submitted; ++i) {
    const PlanSubmit& submit = plan.submits[i];
    submitted = intermediates.AllocateFor(i, *views);
    if (!submitted) break;
    auto args = BuildArgs(submit, i, tensors);
    if (args) args = WithDependencies(std::move(*args), submit, i, ids);
    if (!args) {
      submitted = pypto::unexpected(std::move(args.error()));
      break;
    }
    for (int scope = 0; scope < submit.scopes_opened && submitted; ++scope) {
      const bool manual = submit.opens_manual_scope && scope + 1 == submit.scopes_opened;
      submitted = runtime.ScopeBegin(manual ? ScopeMode::Manual : ScopeMode::Auto);
    }
    if (!submitted) break;
    auto id = submit.fill    ? runtime.SubmitFill(*args, *submit.fill)
              : submit.dummy ? runtime.SubmitDummy(*args)
              : submit.mixed ? runtime.SubmitMixed(*submit.mixed, *args)
                             : runtime.Submit(submit.core_type, submit.func_id, *args);
    if (!id) submitted = pypto::unexpected(std::move(id.error()));
    ids.push_back(id ? *id : kInvalidTaskId);
    for (int scope = 0; scope < submit.scopes_closed; ++scope) runtime.ScopeEnd();
    if (id) intermediates.Submitted(i, *id);
  }
  intermediates.ReleaseAll();  // what a refused submit left: given back as its users finish
  auto waited = runtime.WaitAll();
  if (!submitted) return submitted;
  return waited;
}

}  // namespace pypto::rt
