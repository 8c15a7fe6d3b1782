// The task plan as plugins read it through the C ABI (pypto-c/plan.h): plain structs, and the same
// facts as JSON. Regions are computed with the runtime's own view arithmetic (chip_tensor.h) over
// stand-in descriptors, so they are the elements a run's tasks touch, whatever chain of slices,
// reshapes and transposes made the view.
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "pypto-c/plan.h"
#include "pypto/ir/c_api_bridge.h"
#include "pypto/runtime/c_api_bridge.h"
#include "pypto/runtime/chip_tensor.h"

namespace pypto::rt {
namespace {

static_assert(static_cast<int>(ArgDirection::Input) == PYPTO_ARG_INPUT &&
              static_cast<int>(ArgDirection::Output) == PYPTO_ARG_OUTPUT &&
              static_cast<int>(ArgDirection::InOut) == PYPTO_ARG_INOUT &&
              static_cast<int>(ArgDirection::OutputExisting) == PYPTO_ARG_OUTPUT_EXISTING &&
              static_cast<int>(ArgDirection::NoDep) == PYPTO_ARG_NODEP &&
              static_cast<int>(ArgDirection::Scalar) == PYPTO_ARG_SCALAR);
static_assert(static_cast<int>(CoreType::AIC) == PYPTO_CORE_AIC && static_cast<int>(CoreType::AIV) == PYPTO_CORE_AIV);

// A description and everything it points into. It is the C struct, so that the pointer handed out
// converts back to the storage.
struct PlanDescStorage : pypto_plan_desc {
  std::string orchestration;
  std::vector<std::string> names;  // tensor, kernel and operand names; never resized after pointing into
  std::vector<pypto_plan_tensor> tensors;
  std::vector<pypto_plan_kernel> kernels;
  std::vector<std::vector<pypto_plan_arg>> args;
  std::vector<std::vector<uint32_t>> deps;
  std::vector<pypto_plan_task> tasks;
};

// A tensor operand's descriptor over its root, standing at element 0 of a fake buffer: its
// start_offset is then where it starts on the root.
struct Located {
  ChipTensor view;
  uint32_t root = 0;
};

size_t CountNames(const TaskPlan& plan) {
  size_t count = plan.params.size() + plan.intermediates.size() + plan.kernels.size();
  for (const PlanSubmit& submit : plan.submits) count += submit.args.size();
  return count;
}

const char* Keep(PlanDescStorage& storage, std::string name) {
  storage.names.push_back(std::move(name));
  return storage.names.back().c_str();
}

pypto_plan_tensor CTensor(PlanDescStorage& storage, const PlanTensor& tensor, bool is_param) {
  pypto_plan_tensor out{.name = Keep(storage, tensor.name),
                        .dtype = tensor.dtype,
                        .is_param = static_cast<uint8_t>(is_param),
                        .ndims = static_cast<uint32_t>(std::min<size_t>(tensor.shape.size(), PYPTO_MAX_TENSOR_DIMS)),
                        .shape = {}};
  std::copy_n(tensor.shape.begin(), out.ndims, out.shape);
  return out;
}

// The descriptors of the parameters, the intermediates and the views, each over its root.
pypto::expected<std::vector<std::vector<Located>>, std::string> LocateTensors(const TaskPlan& plan) {
  static char fake_buffer;  // a non-null address; nothing is read through it
  std::vector<std::vector<Located>> pools(3);
  uint32_t root = 0;
  for (const auto* list : {&plan.params, &plan.intermediates}) {
    auto& pool = pools[list == &plan.params ? 0 : 1];
    for (const PlanTensor& tensor : *list) {
      try {
        pool.push_back({MakeExternalTensor(&fake_buffer, tensor.shape, tensor.dtype), root++});
      } catch (const std::invalid_argument& error) {
        return pypto::unexpected(fmt::format("tensor '{}': {}", tensor.name, error.what()));
      }
    }
  }
  for (const PlanView& view : plan.views) {
    const auto& base_pool = pools[static_cast<size_t>(view.base.kind)];
    if (view.base.index >= base_pool.size())
      return pypto::unexpected(fmt::format("view '{}' is of a tensor defined after it or not at all", view.name));
    const Located base = base_pool[view.base.index];
    try {
      const ChipTensor located = view.swapped_axes
                                     ? TransposedTensor(base.view, view.swapped_axes->first, view.swapped_axes->second)
                                 : view.offsets.empty() ? ReshapedTensor(base.view, view.shape)
                                                        : SlicedTensor(base.view, view.shape, view.offsets);
      pools[2].push_back({located, base.root});
    } catch (const std::invalid_argument& error) {
      return pypto::unexpected(fmt::format("view '{}': {}", view.name, error.what()));
    }
  }
  return pools;
}

std::string OperandName(const TaskPlan& plan, PlanTensorRef ref) {
  switch (ref.kind) {
    case PlanTensorRef::Kind::Param: return plan.params[ref.index].name;
    case PlanTensorRef::Kind::Intermediate: return plan.intermediates[ref.index].name;
    case PlanTensorRef::Kind::View: return plan.views[ref.index].name;
  }
  return "";
}

pypto_plan_region Region(const Located& located) {
  pypto_plan_region region{.root = located.root,
                           .start = located.view.start_offset,
                           .extent = located.view.extent_elem_cache,
                           .ndims = located.view.ndims,
                           .shape = {},
                           .strides = {}};
  for (uint32_t d = 0; d < region.ndims && d < PYPTO_MAX_TENSOR_DIMS; ++d) {
    region.shape[d] = located.view.shapes[d];
    region.strides[d] = located.view.strides[d];
    if (region.shape[d] == 0) region.extent = 0;
  }
  return region;
}

pypto::expected<std::vector<pypto_plan_arg>, std::string> TaskArgs(PlanDescStorage& storage, const TaskPlan& plan,
                                                                   const PlanSubmit& submit, size_t index,
                                                                   const std::vector<std::vector<Located>>& pools) {
  std::vector<pypto_plan_arg> args;
  for (size_t i = 0; i < submit.args.size(); ++i) {
    const PlanTaskArg& arg = submit.args[i];
    pypto_plan_arg out{.direction = static_cast<uint32_t>(arg.direction), .tensor = nullptr, .region = {}, .scalar = 0};
    if (arg.direction == ArgDirection::Scalar) {
      out.scalar = arg.scalar;
    } else {
      const auto& pool = pools[static_cast<size_t>(arg.tensor.kind)];
      if (arg.tensor.index >= pool.size())
        return pypto::unexpected(fmt::format("task {} argument {} refers to a tensor the plan does not have", index, i));
      out.tensor = Keep(storage, OperandName(plan, arg.tensor));
      out.region = Region(pool[arg.tensor.index]);
    }
    args.push_back(out);
  }
  return args;
}

pypto_plan_task CTask(const PlanSubmit& submit) {
  pypto_plan_task task{};
  auto add = [&](int32_t func_id, CoreType core) {
    task.kernels[task.num_kernels++] = {.func_id = func_id, .core_type = static_cast<uint32_t>(core)};
  };
  if (!submit.dummy)
    for (const auto& [func_id, core] : SubmitKernels(submit)) add(func_id, core);
  task.block_num = submit.block_num;
  task.scopes_opened = submit.scopes_opened;
  task.scopes_closed = submit.scopes_closed;
  task.manual_scope = submit.opens_manual_scope;
  return task;
}

pypto::expected<std::unique_ptr<PlanDescStorage>, std::string> Describe(const TaskPlan& plan) {
  auto storage = std::make_unique<PlanDescStorage>();
  storage->orchestration = plan.orchestration_name;
  storage->names.reserve(CountNames(plan));
  auto pools = LocateTensors(plan);
  if (!pools) return pypto::unexpected(pools.error());
  for (const PlanTensor& tensor : plan.params) storage->tensors.push_back(CTensor(*storage, tensor, true));
  for (const PlanTensor& tensor : plan.intermediates) storage->tensors.push_back(CTensor(*storage, tensor, false));
  for (const PlanKernel& kernel : plan.kernels)
    storage->kernels.push_back({.func_id = kernel.func_id,
                                .name = Keep(*storage, kernel.name),
                                .core_type = static_cast<uint32_t>(kernel.core_type)});
  for (size_t i = 0; i < plan.submits.size(); ++i) {
    const PlanSubmit& submit = plan.submits[i];
    auto args = TaskArgs(*storage, plan, submit, i, *pools);
    if (!args) return pypto::unexpected(args.error());
    storage->args.push_back(std::move(*args));
    storage->deps.push_back(submit.deps);
  }
  for (size_t i = 0; i < plan.submits.size(); ++i) {
    pypto_plan_task task = CTask(plan.submits[i]);
    task.args = storage->args[i].data();
    task.num_args = storage->args[i].size();
    task.deps = storage->deps[i].data();
    task.num_deps = storage->deps[i].size();
    storage->tasks.push_back(task);
  }
  pypto_plan_desc& desc = *storage;
  desc = {.orchestration = storage->orchestration.c_str(),
          .tensors = storage->tensors.data(),
          .num_tensors = storage->tensors.size(),
          .kernels = storage->kernels.data(),
          .num_kernels = storage->kernels.size(),
          .tasks = storage->tasks.data(),
          .num_tasks = storage->tasks.size()};
  return storage;
}

template <typename T>
nlohmann::json Array(const T* values, size_t count) {
  return nlohmann::json(std::vector<T>(values, values + count));
}

nlohmann::json ArgJson(const pypto_plan_desc& desc, const pypto_plan_arg& arg) {
  const auto direction = static_cast<ArgDirection>(arg.direction);
  nlohmann::json out{{"direction", ArgDirectionName(direction)}};
  if (direction == ArgDirection::Scalar) {
    out["scalar"] = arg.scalar;
    return out;
  }
  const pypto_plan_region& region = arg.region;
  out["tensor"] = arg.tensor;
  out["region"] = {{"root", desc.tensors[region.root].name},
                   {"start", region.start},
                   {"extent", region.extent},
                   {"shape", Array(region.shape, region.ndims)},
                   {"strides", Array(region.strides, region.ndims)}};
  return out;
}

nlohmann::json ToJson(const pypto_plan_desc& desc) {
  nlohmann::json tensors = nlohmann::json::array(), kernels = nlohmann::json::array(), tasks = nlohmann::json::array();
  for (size_t i = 0; i < desc.num_tensors; ++i) {
    const pypto_plan_tensor& tensor = desc.tensors[i];
    tensors.push_back({{"name", tensor.name},
                       {"kind", tensor.is_param ? "param" : "intermediate"},
                       {"dtype", DtypeName(tensor.dtype)},
                       {"shape", Array(tensor.shape, tensor.ndims)}});
  }
  for (size_t i = 0; i < desc.num_kernels; ++i) {
    const pypto_plan_kernel& kernel = desc.kernels[i];
    kernels.push_back({{"func_id", kernel.func_id},
                       {"name", kernel.name},
                       {"core_type", CoreTypeName(static_cast<CoreType>(kernel.core_type))}});
  }
  for (size_t t = 0; t < desc.num_tasks; ++t) {
    const pypto_plan_task& task = desc.tasks[t];
    nlohmann::json members = nlohmann::json::array(), args = nlohmann::json::array();
    for (size_t k = 0; k < task.num_kernels; ++k)
      members.push_back({{"func_id", task.kernels[k].func_id},
                         {"core_type", CoreTypeName(static_cast<CoreType>(task.kernels[k].core_type))}});
    for (size_t a = 0; a < task.num_args; ++a) args.push_back(ArgJson(desc, task.args[a]));
    tasks.push_back({{"index", t},
                     {"kernels", std::move(members)},
                     {"block_num", task.block_num},
                     {"args", std::move(args)},
                     {"deps", Array(task.deps, task.num_deps)},
                     {"scopes_opened", task.scopes_opened},
                     {"scopes_closed", task.scopes_closed},
                     {"manual_scope", task.manual_scope != 0}});
  }
  return {{"format", "pypto-plan"},
          {"version", 1},
          {"orchestration", desc.orchestration},
          {"tensors", std::move(tensors)},
          {"kernels", std::move(kernels)},
          {"tasks", std::move(tasks)}};
}

}  // namespace
}  // namespace pypto::rt

using namespace pypto;

extern "C" {

pypto_status pypto_rt_plan_describe(const pypto_rt_plan* plan, pypto_plan_desc** desc) {
  return c_api::Guard([&] {
    if (!plan || !desc) return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "pypto_rt_plan_describe: null argument");
    *desc = nullptr;
    auto storage = rt::Describe(plan->plan);
    if (!storage) return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "pypto_rt_plan_describe: " + storage.error());
    *desc = storage->release();
    return PYPTO_OK;
  });
}

void pypto_rt_plan_desc_free(pypto_plan_desc* desc) { delete static_cast<rt::PlanDescStorage*>(desc); }

pypto_status pypto_rt_plan_to_json(const pypto_rt_plan* plan, int indent, char** json) {
  return c_api::Guard([&] {
    if (!plan || !json) return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "pypto_rt_plan_to_json: null argument");
    *json = nullptr;
    auto storage = rt::Describe(plan->plan);
    if (!storage) return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "pypto_rt_plan_to_json: " + storage.error());
    *json = c_api::CopyString(rt::ToJson(**storage).dump(indent));
    return PYPTO_OK;
  });
}

}  // extern "C"
