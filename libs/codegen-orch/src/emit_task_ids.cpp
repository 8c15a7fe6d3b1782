// OrchestrationEmitter: TaskIds in orchestration code (copies, pl.system.task_invalid, task_dummy
// joins), TaskId arrays and their elements, and the deps= of a submit.
#include "orchestration_emitter.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"

namespace pypto::codegen_orch::detail {

using ir::DiagnosticKind;
using ir::MakeError;

// The C++ name of a TaskId variable defined so far; null for anything else.
const std::string* OrchestrationEmitter::TaskNameOf(const ir::ExprPtr& expr) const {
  const auto* var = expr->As<ir::Var>();
  auto it = var ? task_names_.find(var) : task_names_.end();
  return it == task_names_.end() ? nullptr : &it->second;
}

// A TaskId variable: a copy of another, pl.system.task_invalid(), or a pl.system.task_dummy join.
ir::Result<bool> OrchestrationEmitter::EmitTaskIdDef(const ir::AssignStmt& assign) {
  const ir::Var* var = assign.var().get();
  const auto* call = assign.value()->As<ir::Call>();
  if (call && call->is_op_call() && call->op()->name == "system.task_dummy") return EmitTaskDummy(assign, *call);
  if (call && call->is_op_call() && call->op()->name == "array.get_element") return EmitArrayElement(assign, *call);
  const ir::Var* from = assign.value()->As<ir::Var>();
  const std::string* from_name = TaskNameOf(assign.value());
  const bool invalid = call && call->is_op_call() && call->op()->name == "system.task_invalid";
  if (!invalid && !from_name)
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("TaskId '{}' must come from a launch (`as tid`, pl.submit), "
                                 "pl.system.task_dummy, pl.system.task_invalid() or another TaskId",
                                 var->name_hint()),
                     assign.span());
  Separate();
  after_scalar_ = true;
  const std::string name = names_.Take(var->name_hint());
  body_ += fmt::format("{}{} = {};\n", indent_, TaskIdDecl(name),
                       invalid ? std::string("PTO2TaskId::invalid()") : *from_name);
  task_names_[var] = name;
  steps_->push_back(Step{TaskIdStep{.var = var, .from = invalid ? nullptr : from}});
  return true;
}

// `join = pl.system.task_dummy(deps=[a, b])`: a task that runs no kernel and completes after a and b.
ir::Result<bool> OrchestrationEmitter::EmitTaskDummy(const ir::AssignStmt& assign, const ir::Call& call) {
  Separate();
  const std::string params = fmt::format("params_t{}", task_count_++);
  SubmitStep step{.submit = rt::PlanSubmit{.dummy = true}, .task_id = assign.var().get()};
  body_ += fmt::format("{}CoreTaskArgs {};\n", indent_, params);
  std::vector<ir::ExprPtr> deps;
  if (const auto* list = call.args()[0]->As<ir::TupleLiteral>()) deps = list->elements();
  if (auto ok = EmitDependencies(deps, params, step); !ok) return ok;
  const std::string name = names_.Take(assign.var()->name_hint());
  body_ += fmt::format("{}{} = rt_submit_dummy_task({}).task_id();\n", indent_, TaskIdDecl(name), params);
  task_names_[assign.var().get()] = name;
  steps_->push_back(Step{std::move(step)});
  return true;
}

// `tids = pl.array.create(n, pl.TASK_ID)`: a C++ array of n TaskIds, all invalid until set.
// `tids = pl.array.update_element(tids, i, t)` (`tids[i] = t`) sets one element in place, so the
// updated array is the same C++ array; a loop carries it by name.
ir::Result<bool> OrchestrationEmitter::EmitTaskIdArray(const ir::AssignStmt& assign) {
  const ir::Var* var = assign.var().get();
  const auto* array = var->type()->As<ir::ArrayType>();
  const auto* call = assign.value()->As<ir::Call>();
  const std::string op = call && call->is_op_call() ? call->op()->name : "";
  if (array->dtype() != ir::DataType::TASK_ID)
    return MakeError(DiagnosticKind::Type,
                     fmt::format("'{}' is {}; orchestration arrays hold TaskIds only yet", var->name_hint(),
                                 array->str()),
                     assign.span());
  if (op == "array.create") {
    Separate();
    after_scalar_ = true;
    const std::string name = names_.Take(var->name_hint());
    const std::string decl = fmt::format("PTO2TaskId {}[{}];\n", name, array->extent());
    if (hoisted_) *hoisted_ += hoist_indent_ + decl;
    else body_ += indent_ + decl;
    body_ += fmt::format("{0}for (PTO2TaskId& {1}_slot : {1}) {1}_slot = PTO2TaskId::invalid();\n", indent_, name);
    task_names_[var] = name;
    steps_->push_back(Step{TaskIdStep{.kind = TaskIdStep::Kind::Create, .var = var, .extent = array->extent()}});
    return true;
  }
  if (const std::string* from = TaskNameOf(assign.value())) {  // another name for the same array
    task_names_[var] = *from;
    steps_->push_back(Step{TaskIdStep{.var = var, .from = assign.value()->As<ir::Var>()}});
    return true;
  }
  if (op != "array.update_element")
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("TaskId array '{}' must come from pl.array.create or an element update",
                                 var->name_hint()),
                     assign.span());
  const std::string* target = TaskNameOf(call->args()[0]);
  const std::string* value = TaskNameOf(call->args()[2]);
  if (!target || !value)
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("'{}[...] = ...' stores a TaskId defined earlier into a TaskId array",
                                 var->name_hint()),
                     assign.span());
  auto index = ElementIndexCpp(call->args()[1], *call);
  if (!index) return pypto::unexpected(index.error());
  // Right after the launch it records, as part of it: no blank line before it.
  body_ += fmt::format("{}{}[{}] = {};\n", indent_, *target, *index, *value);
  task_names_[var] = *target;
  steps_->push_back(Step{TaskIdStep{.kind = TaskIdStep::Kind::Update,
                                    .var = var,
                                    .from = call->args()[0]->As<ir::Var>(),
                                    .index = call->args()[1],
                                    .value = call->args()[2]->As<ir::Var>()}});
  return true;
}

// `t = tids[i]` (pl.array.get_element): one element of a TaskId array.
ir::Result<bool> OrchestrationEmitter::EmitArrayElement(const ir::AssignStmt& assign, const ir::Call& call) {
  const std::string* array = TaskNameOf(call.args()[0]);
  if (!array)
    return MakeError(DiagnosticKind::Syntax, "reads an element of a TaskId array defined earlier", assign.span());
  auto index = ElementIndexCpp(call.args()[1], call);
  if (!index) return pypto::unexpected(index.error());
  Separate();
  after_scalar_ = true;
  const std::string name = names_.Take(assign.var()->name_hint());
  body_ += fmt::format("{}{} = {}[{}];\n", indent_, TaskIdDecl(name), *array, *index);
  task_names_[assign.var().get()] = name;
  steps_->push_back(Step{TaskIdStep{.kind = TaskIdStep::Kind::Get,
                                    .var = assign.var().get(),
                                    .from = call.args()[0]->As<ir::Var>(),
                                    .index = call.args()[1]}});
  return true;
}

// The index of a TaskId array element as C++: known at compile time, since the plan expands it.
ir::Result<std::string> OrchestrationEmitter::ElementIndexCpp(const ir::ExprPtr& index, const ir::Call& call) {
  if (const ir::Var* unknown = UnknownScalar(index))
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("a TaskId array index must be known at compile time; '{}' is only known at run "
                                 "time",
                                 unknown->name_hint()),
                     call.span());
  return CppExpr(index);
}

// `deps=[a, b]` of a submit: the C++ array it passes to set_dependencies, and the plan's TaskIds.
ir::Result<bool> OrchestrationEmitter::EmitDependencies(const std::vector<ir::ExprPtr>& deps, const std::string& params,
                                                        SubmitStep& step) {
  if (deps.empty()) return true;
  std::vector<std::string> names;
  for (const auto& dep : deps) {
    const std::string* name = TaskNameOf(dep);
    if (!name)
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("deps= takes TaskIds defined earlier in the orchestration; '{}' is not one",
                                   ir::PrintExpr(dep)),
                       dep->span());
    step.deps.push_back(dep->As<ir::Var>());
    const auto* array = dep->type()->As<ir::ArrayType>();
    if (!array) {
      names.push_back(*name);
      continue;
    }
    for (int64_t i = 0; i < array->extent(); ++i) names.push_back(fmt::format("{}[{}]", *name, i));
  }
  body_ += fmt::format("{0}PTO2TaskId {1}_deps[{2}] = {{{3}}};\n{0}{1}.set_dependencies({1}_deps, {2});\n",
                       indent_, params, names.size(), fmt::join(names, ", "));
  return true;
}

}  // namespace pypto::codegen_orch::detail
