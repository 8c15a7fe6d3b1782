// system.task_* ops of orchestration code: TaskIds that order launches without running a kernel.
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
}

}  // namespace pypto::ir
