// OrchestrationEmitter: orchestration ifs as C++ ifs and IfSteps, with the scalar, TaskId and tensor
// results their branches define.
#include "orchestration_emitter.h"

#include <fmt/format.h>

#include <utility>

#include "orchestration_scalars.h"
#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"

namespace pypto::codegen_orch::detail {

using ir::DiagnosticKind;
using ir::MakeError;

// `if cond: ... else: ...` on orchestration scalars: a C++ if, and a branch the plan expansion
// chooses with the values the condition has there (the same ones the C++ computes). Scalars and
// TaskIds both branches assign are C++ variables declared before the if and assigned at the end of
// each branch.
// A tensor both branches rebind (`out = self.k1(x, out)` / `out = self.k2(x, out)`) must name the
// same buffer after either, which is then what later code uses.
ir::Result<bool> OrchestrationEmitter::EmitIf(const ir::IfStmt& branch) {
  const auto* scalar = branch.condition()->type()->As<ir::ScalarType>();
  if (!scalar || !CppScalarType(scalar->dtype()))
    return MakeError(DiagnosticKind::Type,
                     fmt::format("the condition of an orchestration if must be an integer, BOOL or float scalar, "
                                 "got {}",
                                 branch.condition()->type()->str()),
                     branch.span());
  const char* hint = "branch on literals, scalar parameters, loop variables and scalars computed from them";
  if (auto ok = HoistElementReads(branch.condition()); !ok) return ok;
  if (const ir::Call* read = RunTimeCall(branch.condition()))
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("the condition of this orchestration if calls '{}', whose value is only known at "
                                 "run time; the task plan chooses the branch when it is built",
                                 read->is_op_call() ? read->op()->name : read->callee()),
                     branch.span(), hint);
  if (const ir::Var* unknown = UnknownScalar(branch.condition()))
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("the condition of this orchestration if reads '{}', which is only known at run "
                                 "time; the task plan chooses the branch when it is built",
                                 unknown->name_hint()),
                     branch.span(), hint);
  auto condition = CppExpr(branch.condition());
  if (!condition) return pypto::unexpected(condition.error());
  Separate();
  std::vector<std::string> results;  // the C++ variables of the scalar and TaskId results; "" for tensors
  for (const auto& var : branch.return_vars()) {
    results.emplace_back();
    if (var->type()->As<ir::TensorType>()) continue;
    if (ir::IsTaskIdArray(*var->type())) {  // `tids[i] = t` in a branch: the one C++ array, updated in place
      results.back() = kArrayResult;
      continue;
    }
    if (ir::IsTaskId(*var->type())) {  // `with pl.at(...) as t` in both branches: the launch that ran
      results.back() = names_.Take(var->name_hint());
      body_ += fmt::format("{}{} = PTO2TaskId::invalid();\n", indent_, TaskIdDecl(results.back()));
      task_names_[var.get()] = results.back();
      continue;
    }
    const auto* result = var->type()->As<ir::ScalarType>();
    auto type = result ? CppScalarType(result->dtype()) : std::nullopt;
    if (!type)
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("'{}' ({}) is assigned in the branches of an orchestration if; its branches "
                                   "may assign integer, BOOL and float scalars and TaskIds, and rebind tensors only",
                                   var->name_hint(), var->type()->str()),
                       branch.span(), "assign it before the if");
    results.back() = names_.Take(var->name_hint());
    const std::string declared = Declared(*type, results.back());
    if (!hoisted_) body_ += fmt::format("{}{};\n", indent_, declared);
    scalars_[var.get()] = results.back();
  }
  // A comparison is parenthesised already.
  const auto* binary = branch.condition()->As<ir::BinaryExpr>();
  const bool wrapped = binary && ir::IsComparison(binary->op());
  body_ += fmt::format("{}if {}{}{} {{\n", indent_, wrapped ? "" : "(", *condition, wrapped ? "" : ")");
  IfStep step{.stmt = &branch};
  std::vector<std::optional<Binding>> then_tensors, else_tensors;
  if (auto ok = EmitBranch(branch.then_body(), branch, results, step.then_body, then_tensors); !ok) return ok;
  if (branch.else_body() && !ir::FlattenStmts(branch.else_body()).empty()) {
    body_ += indent_ + "} else {\n";
    if (auto ok = EmitBranch(branch.else_body(), branch, results, step.else_body, else_tensors); !ok) return ok;
  }
  body_ += indent_ + "}\n";
  block_start_ = after_scalar_ = false;
  steps_->push_back(Step{std::move(step)});
  return BindIfTensors(branch, then_tensors, else_tensors);
}

// One branch of an orchestration if, its steps going to `steps`. The yield ending it assigns the
// if's scalar results and records the buffers its tensor results name (`tensors`).
ir::Result<bool> OrchestrationEmitter::EmitBranch(const ir::StmtPtr& body, const ir::IfStmt& branch,
                                                  const std::vector<std::string>& results, std::vector<Step>& steps,
                                                  std::vector<std::optional<Binding>>& tensors) {
  std::vector<Step>* outer_steps = std::exchange(steps_, &steps);
  indent_ += "  ";
  block_start_ = true;
  ++if_depth_;
  for (const auto& stmt : ir::FlattenStmts(body)) {
    const auto* yield = stmt->As<ir::YieldStmt>();
    if (!yield) {
      if (auto ok = EmitStmt(stmt); !ok) return ok;
      continue;
    }
    if (yield->values().size() != results.size())
      return MakeError(DiagnosticKind::Internal, "an if branch yields a value per result", yield->span());
    for (size_t i = 0; i < results.size(); ++i) {
      const auto& value = yield->values()[i];
      const auto& var = branch.return_vars()[i];
      if (results[i].empty()) {
        const auto* source = value->As<ir::Var>();
        auto it = source ? bindings_.find(source) : bindings_.end();
        tensors.push_back(it == bindings_.end() ? std::nullopt : std::optional<Binding>(it->second));
        continue;
      }
      if (results[i] == kArrayResult) {
        const std::string* array = TaskNameOf(value);
        auto named = task_names_.find(var.get());
        if (!array || (named != task_names_.end() && named->second != *array))
          return MakeError(DiagnosticKind::Syntax,
                           fmt::format("'{}' names a different TaskId array after each branch of this "
                                       "orchestration if",
                                       var->name_hint()),
                           branch.span(), "update one array in both branches");
        task_names_[var.get()] = *array;
        steps_->push_back(Step{TaskIdStep{.var = var.get(), .from = value->As<ir::Var>()}});
        continue;
      }
      if (ir::IsTaskId(*var->type())) {
        const std::string* task = TaskNameOf(value);
        if (!task)
          return MakeError(DiagnosticKind::Internal, fmt::format("'{}' is not a TaskId here", var->name_hint()),
                           value->span());
        body_ += fmt::format("{}{} = {};\n", indent_, results[i], *task);
        steps_->push_back(Step{TaskIdStep{.var = var.get(), .from = value->As<ir::Var>()}});
        continue;
      }
      if (const ir::Var* unknown = UnknownScalar(value))
        return MakeError(DiagnosticKind::Syntax,
                         fmt::format("'{}' is assigned from '{}', which is only known at run time; orchestration "
                                     "scalars must be known when the task plan is built",
                                     var->name_hint(), unknown->name_hint()),
                         value->span());
      auto text = CppExpr(value);
      if (!text) return pypto::unexpected(text.error());
      body_ += fmt::format("{}{} = {};\n", indent_, results[i], *text);
      steps_->push_back(Step{ScalarStep{
          .var = var.get(), .value = value, .dtype = var->type()->As<ir::ScalarType>()->dtype()}});
    }
  }
  --if_depth_;
  indent_.resize(indent_.size() - 2);
  steps_ = outer_steps;
  return true;
}

// A tensor result of an orchestration if names the buffer both branches left it naming.
ir::Result<bool> OrchestrationEmitter::BindIfTensors(const ir::IfStmt& branch,
                                                     const std::vector<std::optional<Binding>>& then_tensors,
                                                     const std::vector<std::optional<Binding>>& else_tensors) {
  size_t t = 0;
  for (const auto& var : branch.return_vars()) {
    if (!var->type()->As<ir::TensorType>()) continue;
    const auto& a = then_tensors.at(t);
    const auto& b = else_tensors.at(t);
    ++t;
    if (!a || !b || a->ref.kind != b->ref.kind || a->ref.index != b->ref.index)
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("'{}' names a different tensor after each branch of this orchestration if; "
                                   "the branches may choose which kernels write a tensor, not which tensor later "
                                   "code uses",
                                   var->name_hint()),
                       branch.span(), "pass the tensor each kernel writes as its output argument in both branches");
    bindings_[var.get()] = *a;
  }
  return true;
}

}  // namespace pypto::codegen_orch::detail
