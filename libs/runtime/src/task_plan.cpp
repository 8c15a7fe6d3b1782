// Running a task plan: check the caller's tensors, allocate the intermediates, submit every task in
// program order and wait. Intermediates live until every task has finished, including on failure.
#include "pypto/runtime/task_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
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

// Kernels may use aligned vector loads on intermediates, so they get cache-line alignment. Zero-filled
// so that a kernel reading a region nobody wrote sees the same values on every run, or filled with the
// tensor's starting value when it has one.
pypto::expected<PlanTensorMemory, FatalError> AllocatePlanTensor(const PlanTensor& tensor, size_t index) {
  constexpr size_t kAlignment = 64;
  const size_t element_size = ElementSize(tensor.dtype);
  if (tensor.shape.empty() || tensor.shape.size() > PYPTO_MAX_TENSOR_DIMS || element_size == 0)
    return InvalidArgs(fmt::format("intermediate {} ('{}'): shape {} {} is not a valid tensor", index, tensor.name,
                                   ShapeString(tensor.shape), DtypeName(tensor.dtype)));
  size_t bytes = element_size;
  for (uint32_t extent : tensor.shape) bytes *= extent;
  // aligned_alloc wants a multiple of the alignment, and at least one block keeps the address unique.
  const size_t rounded = std::max(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
  PlanTensorMemory buffer(std::aligned_alloc(kAlignment, rounded), [](void* memory) { std::free(memory); });
  if (!buffer)
    return pypto::unexpected(FatalError{
        FatalCode::OutOfMemory, fmt::format("cannot allocate {} bytes for intermediate '{}'", bytes, tensor.name)});
  std::memset(buffer.get(), 0, rounded);
  if (tensor.initial_bits) FillElements(buffer.get(), bytes / element_size, element_size, *tensor.initial_bits);
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
    const bool same_shape = std::ranges::equal(actual_shape, expected.shape);
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
  const char* env = std::getenv("PTO2_RING_TASK_WINDOW");
  if (!env || !*env) return RuntimeOptions{}.task_window;
  int window = 0;
  const char* end = env + std::strlen(env);
  if (auto [ptr, ec] = std::from_chars(env, end, window); ec != std::errc{} || ptr != end || window < 2) {
    spdlog::warn("ignoring PTO2_RING_TASK_WINDOW='{}': not an integer of at least 2", env);
    return RuntimeOptions{}.task_window;
  }
  return window;
}

pypto::expected<void, FatalError> RunPlan(const TaskPlan& plan, std::span<const ChipTensor> params, Runtime& runtime) {
  if (auto checked = CheckPlanParams(plan, params); !checked) return checked;

  std::vector<PlanTensorMemory> buffers;
  std::vector<ChipTensor> intermediates;
  for (size_t i = 0; i < plan.intermediates.size(); ++i) {
    const PlanTensor& tensor = plan.intermediates[i];
    auto buffer = AllocatePlanTensor(tensor, i);
    if (!buffer) return pypto::unexpected(std::move(buffer.error()));
    intermediates.push_back(MakeExternalTensor(buffer->get(), tensor.shape, tensor.dtype));
    buffers.push_back(std::move(*buffer));
  }

  auto views = BuildViews(plan, RunTensors{params, intermediates, {}});
  if (!views) return pypto::unexpected(std::move(views.error()));
  const RunTensors tensors{params, intermediates, *views};

  // Stop at the first refused submit, but always wait: tasks already submitted may use the buffers.
  pypto::expected<void, FatalError> submitted;
  std::vector<TaskId> ids;  // of each submit so far, for the explicit dependencies of later ones
  ids.reserve(plan.submits.size());
  for (size_t i = 0; i < plan.submits.size() && submitted; ++i) {
    const PlanSubmit& submit = plan.submits[i];
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
  }
  auto waited = runtime.WaitAll();
  if (!submitted) return submitted;
  return waited;
}

}  // namespace pypto::rt
