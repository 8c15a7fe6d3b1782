// system.task_* ops of orchestration code: TaskIds that order launches without running a kernel,
// and what orchestration code may ask of the device it runs on: how many core groups (clusters,
// each one AIC) and standalone AIV cores it has, for the core_num of a pl.spmd launch.
#include <fmt/format.h>

#include "op_checks.h"

namespace pypto::ir {
namespace {

using namespace ops;

TypePtr TaskIdType() { return std::make_shared<ScalarType>(DataType::TASK_ID); }

// pl.system.task_dummy(deps=[a, b]): a task with no kernel that completes once a and b have; its
// TaskId joins them, so one later `deps=[join]` stands for all of them.
Result<TypePtr> DeduceTaskDummy(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  const auto* deps = args[0]->As<TupleLiteral>();
  if (!deps) return TypeError("pl.system.task_dummy takes deps=[...], a list of TaskIds", span);
  for (const auto& dep : deps->elements()) {
    if (!IsTaskId(*dep->type()) && !IsTaskIdArray(*dep->type()))
      return TypeError(fmt::format("pl.system.task_dummy waits for TaskIds, got {}", dep->type()->str()),
                       dep->span().known() ? dep->span() : span);
  }
  return TaskIdType();
}

Result<TypePtr> DeduceTaskInvalid(const std::vector<ExprPtr>&, const Call::Kwargs&, const Span&) {
  return TaskIdType();
}

// pl.system.task_is_valid(t): whether t names a launched task rather than task_invalid().
Result<TypePtr> DeduceTaskIsValid(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  if (!IsTaskId(*args[0]->type()))
    return TypeError(fmt::format("the value tested must be a TaskId, got {}", args[0]->type()->str()),
                     args[0]->span().known() ? args[0]->span() : span);
  return TypePtr(std::make_shared<ScalarType>(DataType::BOOL));
}

Result<TypePtr> DeduceCoreCount(const std::vector<ExprPtr>&, const Call::Kwargs&, const Span&) {
  return TypePtr(std::make_shared<ScalarType>(DataType::INT32));
}

}  // namespace

void RegisterTaskOps(OpRegistry& registry) {
  registry.Register(OpDef{.name = "system.task_dummy",
                          .description = "a dependency-only task joining the TaskIds it waits for",
                          .params = {Arg("deps")},
                          .deduce_type = DeduceTaskDummy,
                          .affinity = CoreAffinity::Shared});
  registry.Register(OpDef{.name = "system.task_invalid",
                          .description = "the TaskId that orders nothing (what deps=[None] means)",
                          .params = {},
                          .deduce_type = DeduceTaskInvalid,
                          .affinity = CoreAffinity::Shared});
  registry.Register(OpDef{.name = "system.task_is_valid",
                          .description = "whether a TaskId names a launched task (not task_invalid())",
                          .params = {Arg("task_id")},
                          .deduce_type = DeduceTaskIsValid,
                          .affinity = CoreAffinity::Shared});
  registry.Register(OpDef{.name = "system.available_cluster_count",
                          .description = "the device's core groups (one AIC each): the core_num of a mixed launch",
                          .params = {},
                          .deduce_type = DeduceCoreCount,
                          .affinity = CoreAffinity::Shared});
  registry.Register(OpDef{.name = "system.available_aiv_count",
                          .description = "the device's AIV cores: the core_num of a vector-only launch",
                          .params = {},
                          .deduce_type = DeduceCoreCount,
                          .affinity = CoreAffinity::Shared});
}

}  // namespace pypto::ir
