// OrchestrationEmitter: orchestration loops as C++ for loops and LoopSteps, and the values they
// carry (scalars, TaskIds, tensors updated in place or rebound), assigned where the body yields.
#include "orchestration_emitter.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "orchestration_scalars.h"
#include "pypto/ir/functor.h"
#include "pypto/passes/ir_property.h"

namespace pypto::codegen_orch::detail {

using ir::DiagnosticKind;
using ir::MakeError;

// `for r in pl.range(start, stop, step)`: a C++ for loop, and a loop the plan expands. The bounds
// must be known when the plan is expanded: literals, enclosing loop variables, element reads and
// scalars computed from them.
ir::Result<bool> OrchestrationEmitter::EmitLoop(const ir::ForStmt& loop) {
  const auto& var = loop.loop_var();
  std::string bound_text[3];
  const ir::ExprPtr* bounds[3] = {&loop.start(), &loop.stop(), &loop.step()};
  for (int b = 0; b < 3; ++b) {
    const ir::ExprPtr& bound = *bounds[b];
    const auto* scalar = bound->type()->As<ir::ScalarType>();
    if (!scalar || !ir::IsInteger(scalar->dtype()))
      return MakeError(DiagnosticKind::Type,
                       fmt::format("the bounds of orchestration loop '{}' must be integers, got {}",
                                   var->name_hint(), bound->type()->str()),
                       loop.span());
    if (auto ok = HoistElementReads(bound); !ok) return ok;  // `pl.range(pl.read(counts, [e]))`
    if (const ir::Var* unknown = UnknownScalar(bound))
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("the bounds of orchestration loop '{}' must be compile-time constants, since "
                                   "the task plan unrolls the loop; '{}' is only known at run time",
                                   var->name_hint(), unknown->name_hint()),
                       loop.span());
    auto text = CppExpr(bound);
    if (!text) return pypto::unexpected(text.error());
    bound_text[b] = *text;
  }
  const auto& [start, stop, step] = bound_text;
  const auto constant_step = ir::AsConstInt(loop.step());
  if (constant_step == 0)
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("the step of orchestration loop '{}' is zero", var->name_hint()), loop.span());
  Separate();
  if (auto ok = EmitCarries(loop); !ok) return ok;
  const std::string name = names_.Take(var->name_hint());
  scalars_[var.get()] = name;
  std::string condition;
  if (constant_step) {
    condition = fmt::format("{} {} {}", name, *constant_step > 0 ? "<" : ">", stop);
  } else {
    condition = fmt::format("((({0}) > 0 && {1} < {2}) || (({0}) < 0 && {1} > {2}))", step, name, stop);
  }
  body_ += fmt::format("{0}for (int64_t {1} = {2}; {3}; {1} += {4}) {{\n", indent_, name, start, condition, step);
  // Each iteration is a runtime scope where the IR's loop body is one (MaterializeRuntimeScopes puts
  // it there outside manual scopes), so its tasks' ring slots come back when it ends.
  const ir::RuntimeScopeStmt* iteration_scope = passes::AsAutoRuntimeScope(loop.body());
  const bool scoped = iteration_scope != nullptr;
  if (scoped) body_ += indent_ + "  PTO2_SCOPE() {\n";

  LoopStep expanded{.loop = &loop, .carries_values_out = CarriesValuesOut(loop), .scoped = scoped};
  std::vector<Step>* outer_steps = steps_;
  steps_ = &expanded.body;
  const size_t body_indent = scoped ? 4 : 2;
  indent_ += std::string(body_indent, ' ');
  block_start_ = true;
  ++loop_depth_;
  const ir::ForStmt* outer_loop = std::exchange(current_loop_, &loop);
  for (const auto& stmt : scoped ? StmtsInScope(*iteration_scope, loop.body()) : ir::FlattenStmts(loop.body()))
    if (auto ok = EmitStmt(stmt); !ok) return ok;
  current_loop_ = outer_loop;
  --loop_depth_;
  indent_.resize(indent_.size() - body_indent);
  steps_ = outer_steps;
  body_ += (scoped ? indent_ + "  }\n" : "") + indent_ + "}\n";
  block_start_ = after_scalar_ = false;
  expanded.submits = ContainsSubmit(expanded.body);
  steps_->push_back(Step{std::move(expanded)});
  // After the loop its results name the carried values' last values: the same C++ variables.
  for (size_t i = 0; i < loop.return_vars().size(); ++i) {
    const ir::IterArg& carried = loop.iter_args()[i];
    const ir::Var* result = loop.return_vars()[i].get();
    switch (carried.carry) {
      case ir::CarryKind::Scalar:
        scalars_[result] = scalars_.at(carried.var.get());
        steps_->push_back(Step{ScalarStep{
            .var = result, .value = carried.var, .dtype = carried.var->type()->As<ir::ScalarType>()->dtype()}});
        break;
      case ir::CarryKind::Alias:
      case ir::CarryKind::Rebind: bindings_[result] = bindings_.at(carried.var.get()); break;
      default:
        task_names_[result] = task_names_.at(carried.var.get());
        steps_->push_back(Step{TaskIdStep{.var = result, .from = carried.var.get()}});
    }
  }
  return true;
}

// Whether the plan must expand the loop even when it submits nothing: code after it reads a scalar it
// computes or a tensor it rebinds.
bool OrchestrationEmitter::CarriesValuesOut(const ir::ForStmt& loop) {
  return std::ranges::any_of(loop.iter_args(), [](const ir::IterArg& arg) {
    return arg.carry == ir::CarryKind::Scalar || arg.carry == ir::CarryKind::Rebind;
  });
}

// How the loop carries each value was decided by ClassifyIterArgCarry (IterArgCarryClassified):
// scalars (`max_bn = pl.max(max_bn, n)`), TaskIds, TaskId arrays, and tensors updated in place
// (Alias) or rebound to another buffer (Rebind).
ir::Result<bool> OrchestrationEmitter::EmitCarries(const ir::ForStmt& loop) {
  for (const auto& iter_arg : loop.iter_args()) {
    ir::Result<bool> ok = true;
    switch (iter_arg.carry) {
      case ir::CarryKind::Scalar: ok = EmitCarriedScalar(loop, iter_arg); break;
      case ir::CarryKind::TaskId:
      case ir::CarryKind::TaskIdArray: ok = EmitCarriedTaskId(iter_arg); break;
      case ir::CarryKind::Alias:
      case ir::CarryKind::Rebind: ok = EmitCarriedTensor(loop, iter_arg); break;
      case ir::CarryKind::Unclassified:
        ok = MakeError(DiagnosticKind::Internal,
                       fmt::format("'{}' carried by loop '{}' is not classified", iter_arg.var->name_hint(),
                                   loop.loop_var()->name_hint()),
                       loop.span());
    }
    if (!ok) return ok;
  }
  return true;
}

// A carried scalar is a C++ variable declared before the loop and assigned where the body yields.
ir::Result<bool> OrchestrationEmitter::EmitCarriedScalar(const ir::ForStmt& loop, const ir::IterArg& iter_arg) {
  const ir::Var& var = *iter_arg.var;
  const auto dtype = var.type()->As<ir::ScalarType>()->dtype();
  auto type = CppScalarType(dtype);
  if (!type)
    return MakeError(DiagnosticKind::Type,
                     fmt::format("orchestration loop '{}' carries '{}' ({}); orchestration code holds integer, "
                                 "BOOL, FP32 and FP64 scalars only",
                                 loop.loop_var()->name_hint(), var.name_hint(), ir::DataTypeName(dtype)),
                     loop.span());
  if (const ir::Var* unknown = UnknownScalar(iter_arg.init))
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("'{}' starts from '{}', which is only known at run time; orchestration scalars "
                                 "must be known at compile time",
                                 var.name_hint(), unknown->name_hint()),
                     loop.span());
  auto init = CppExpr(iter_arg.init);
  if (!init) return pypto::unexpected(init.error());
  const std::string name = names_.Take(var.name_hint());
  body_ += fmt::format("{}{} = {};\n", indent_, Declared(*type, name), *init);
  scalars_[&var] = name;
  steps_->push_back(Step{ScalarStep{.var = &var, .value = iter_arg.init, .dtype = dtype}});
  return true;
}

// A carried TaskId (`prev = t` chains launches across iterations) is a C++ variable declared before
// the loop and assigned where the body yields it; a carried TaskId array (`tids[i] = t`) is updated in
// place: the carried array is the C++ array itself.
ir::Result<bool> OrchestrationEmitter::EmitCarriedTaskId(const ir::IterArg& iter_arg) {
  const std::string* init = TaskNameOf(iter_arg.init);
  if (!init)
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("'{}' must be a TaskId before the loop", iter_arg.var->name_hint()),
                     iter_arg.init->span());
  if (iter_arg.carry == ir::CarryKind::TaskIdArray) {
    task_names_[iter_arg.var.get()] = *init;
  } else {
    const std::string name = names_.Take(iter_arg.var->name_hint());
    body_ += fmt::format("{}{} = {};\n", indent_, TaskIdDecl(name), *init);
    task_names_[iter_arg.var.get()] = name;
  }
  steps_->push_back(Step{TaskIdStep{.var = iter_arg.var.get(), .from = iter_arg.init->As<ir::Var>()}});
  return true;
}

// A tensor updated in place (Alias) is its initial tensor in every iteration: the same C++ tensor,
// never copied, since the runtime orders tasks by the tensors they are handed. A tensor rebound to
// another buffer (Rebind) is a C++ tensor variable declared before the loop and reassigned at the
// yield; in the plan it is a template view that each rebinding points at the buffer it names then.
ir::Result<bool> OrchestrationEmitter::EmitCarriedTensor(const ir::ForStmt& loop, const ir::IterArg& iter_arg) {
  const auto* init_var = iter_arg.init->As<ir::Var>();
  auto init = init_var ? bindings_.find(init_var) : bindings_.end();
  if (init == bindings_.end())
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("orchestration loop '{}' carries '{}', which must start from a tensor of the "
                                 "orchestration (a parameter, a pl.create_tensor or a view)",
                                 loop.loop_var()->name_hint(), iter_arg.var->name_hint()),
                     iter_arg.init->span());
  if (iter_arg.carry == ir::CarryKind::Alias) {
    bindings_[iter_arg.var.get()] = init->second;
    return true;
  }
  rt::PlanView slot{.name = iter_arg.var->name_hint(), .base = init->second.ref};
  ViewShape(*iter_arg.var, slot);
  const auto index = static_cast<uint32_t>(result_.plan.views.size());
  result_.plan.views.push_back(std::move(slot));
  template_views_.insert(index);
  const std::string name = names_.Take(iter_arg.var->name_hint());
  body_ += fmt::format("{}{} = {};\n", indent_, Declared("ChipTensor", name), init->second.cpp_name);
  const rt::PlanTensorRef ref{rt::PlanTensorRef::Kind::View, index};
  bindings_[iter_arg.var.get()] = Binding{ref, name};
  steps_->push_back(Step{RebindStep{.rebindings = {{.slot = index, .value = init->second.ref}}}});
  return true;
}

// The yield ending a loop body that carries values: each carried variable takes its next value.
ir::Result<bool> OrchestrationEmitter::EmitLoopYield(const ir::YieldStmt& yield) {
  if (!current_loop_ || current_loop_->iter_args().size() != yield.values().size())
    return MakeError(DiagnosticKind::Internal, "a yield outside a loop carrying values", yield.span());
  if (auto ok = EmitScalarYield(yield); !ok) return ok;
  if (auto ok = EmitTensorYield(yield); !ok) return ok;
  for (size_t i = 0; i < yield.values().size(); ++i) {
    const ir::IterArg& iter_arg = current_loop_->iter_args()[i];
    if (iter_arg.carry != ir::CarryKind::TaskId && iter_arg.carry != ir::CarryKind::TaskIdArray) continue;
    const ir::Var* carried = iter_arg.var.get();
    const std::string* value = TaskNameOf(yield.values()[i]);
    if (!value)
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("'{}' must be a TaskId at the end of the loop body", carried->name_hint()),
                       yield.span());
    const std::string& target = task_names_.at(carried);
    if (const auto* array = carried->type()->As<ir::ArrayType>()) {
      if (*value != target)  // another array: copied element by element
        body_ += fmt::format("{0}for (int64_t {1}_k = 0; {1}_k < {2}; ++{1}_k) {1}[{1}_k] = {3}[{1}_k];\n", indent_,
                             target, array->extent(), *value);
    } else {
      body_ += fmt::format("{}{} = {};\n", indent_, target, *value);
    }
    steps_->push_back(Step{TaskIdStep{.var = carried, .from = yield.values()[i]->As<ir::Var>()}});
  }
  return true;
}

// The rebound tensors' next buffers. Each is read before any is assigned, since one may be another's
// value of this iteration (`a, b = b, a`).
ir::Result<bool> OrchestrationEmitter::EmitTensorYield(const ir::YieldStmt& yield) {
  std::vector<std::pair<const Binding*, const Binding*>> rebinds;  // carried variable, next buffer
  for (size_t i = 0; i < yield.values().size(); ++i) {
    const ir::IterArg& iter_arg = current_loop_->iter_args()[i];
    if (iter_arg.carry != ir::CarryKind::Rebind) continue;
    const auto* value = yield.values()[i]->As<ir::Var>();
    auto next = value ? bindings_.find(value) : bindings_.end();
    if (next == bindings_.end())
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("'{}' must name a tensor of the orchestration at the end of the loop body",
                                   iter_arg.var->name_hint()),
                       yield.values()[i]->span());
    rebinds.emplace_back(&bindings_.at(iter_arg.var.get()), &next->second);
  }
  const bool several = rebinds.size() > 1;
  std::vector<std::string> temporaries;
  if (several)
    for (const auto& [carried, next] : rebinds) {
      temporaries.push_back(names_.Take(carried->cpp_name + "_next"));
      body_ += fmt::format("{}const ChipTensor {} = {};\n", indent_, temporaries.back(), next->cpp_name);
    }
  for (size_t i = 0; i < rebinds.size(); ++i) {
    const auto& [carried, next] = rebinds[i];
    body_ += fmt::format("{}{} = {};\n", indent_, carried->cpp_name, several ? temporaries[i] : next->cpp_name);
  }
  RebindStep step;
  for (const auto& [carried, next] : rebinds) step.rebindings.push_back({.slot = carried->ref.index, .value = next->ref});
  if (!step.rebindings.empty()) steps_->push_back(Step{std::move(step)});
  return true;
}

// The carried scalars' next values, each computed into a temporary first, since one may read
// another's value of this iteration (`a, b = b, a + b`).
ir::Result<bool> OrchestrationEmitter::EmitScalarYield(const ir::YieldStmt& yield) {
  CarryStep carry;
  std::vector<std::pair<std::string, std::string>> assignments;  // C++ variable, temporary
  for (size_t i = 0; i < yield.values().size(); ++i) {
    if (current_loop_->iter_args()[i].carry != ir::CarryKind::Scalar) continue;
    const ir::Var* carried = current_loop_->iter_args()[i].var.get();
    const auto dtype = carried->type()->As<ir::ScalarType>()->dtype();
    auto value = CppExpr(yield.values()[i]);
    if (!value) return pypto::unexpected(value.error());
    const std::string next = names_.Take(carried->name_hint() + "_next");
    body_ += fmt::format("{}const {} {} = {};\n", indent_, *CppScalarType(dtype), next, *value);
    assignments.emplace_back(scalars_.at(carried), next);
    carry.updates.push_back(ScalarStep{.var = carried, .value = yield.values()[i], .dtype = dtype});
  }
  for (const auto& [target, next] : assignments) body_ += fmt::format("{}{} = {};\n", indent_, target, next);
  if (!carry.updates.empty()) steps_->push_back(Step{std::move(carry)});
  return true;
}

bool OrchestrationEmitter::ContainsSubmit(const std::vector<Step>& steps) {
  for (const auto& step : steps) {
    if (std::holds_alternative<SubmitStep>(step.node)) return true;
    if (const auto* scope = std::get_if<ScopeStep>(&step.node); scope && ContainsSubmit(scope->body)) return true;
    if (const auto* loop = std::get_if<LoopStep>(&step.node); loop && loop->submits) return true;
    if (const auto* branch = std::get_if<IfStep>(&step.node);
        branch && (ContainsSubmit(branch->then_body) || ContainsSubmit(branch->else_body)))
      return true;
  }
  return false;
}

}  // namespace pypto::codegen_orch::detail
