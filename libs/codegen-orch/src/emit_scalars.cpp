// OrchestrationEmitter: scalar code. Scalar definitions, pl.tensor.read of a parameter's element,
// the checks that a scalar is known when the plan is built, and scalar expressions as C++.
#include "orchestration_emitter.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <limits>

#include "orchestration_scalars.h"
#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"

namespace pypto::codegen_orch::detail {

using ir::DiagnosticKind;
using ir::MakeError;

// `k0 = kb * 64`: a C++ variable, and a value the plan expansion computes in every iteration.
ir::Result<bool> OrchestrationEmitter::EmitScalarDef(const ir::AssignStmt& assign) {
  const auto& var = assign.var();
  const auto dtype = var->type()->As<ir::ScalarType>()->dtype();
  auto type = CppScalarType(dtype);
  if (!type)
    return MakeError(DiagnosticKind::Type,
                     fmt::format("orchestration scalar '{}' is {}; orchestration code holds integer, BOOL, FP32 and "
                                 "FP64 scalars only",
                                 var->name_hint(), ir::DataTypeName(dtype)),
                     assign.span());
  if (const ir::Var* unknown = UnknownScalar(assign.value()))
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("'{}' is computed from '{}', which is only known at run time; orchestration "
                                 "scalars must be known at compile time",
                                 var->name_hint(), unknown->name_hint()),
                     assign.span());
  auto value = CppExpr(assign.value());
  if (!value) return pypto::unexpected(value.error());
  Separate();
  after_scalar_ = true;
  const std::string name = names_.Take(var->name_hint());
  scalars_[var.get()] = name;
  body_ += fmt::format("{}{} = {};\n", indent_, Declared(*type, name), *value);
  steps_->push_back(Step{ScalarStep{.var = var.get(), .value = assign.value(), .dtype = dtype}});
  return true;
}

// `v = pl.tensor.read(t, [i, ...])` of an orchestration tensor: the C++ reads the element through
// the runtime (get_tensor_data, as upstream's host orchestration does, waiting for t's producer), and
// the plan is expanded at each run, so that v may bound a loop, choose a branch or be a kernel's
// scalar argument. A read of a tensor that tasks before it write runs those tasks first.
ir::Result<bool> OrchestrationEmitter::EmitTensorRead(const ir::AssignStmt& assign, const ir::Call& read) {
  const auto& var = assign.var();
  const auto dtype = var->type()->As<ir::ScalarType>()->dtype();
  auto name = EmitElementRead(read, var->name_hint(), dtype, assign.span());
  if (!name) return pypto::unexpected(name.error());
  scalars_[var.get()] = *name;
  steps_->push_back(Step{ScalarStep{.var = var.get(), .value = assign.value(), .dtype = dtype}});
  return true;
}

// `M = tensor.extent(x, axis=0)`: a `pl.dynamic` dimension of a program compiled for every extent.
// The C++ reads the extent off the tensor's descriptor (upstream's orchestration reads
// `orch_args.tensor(i).ref().shapes[axis]`), and the plan is expanded at each run, reading it from
// the run's tensor, so that M may bound a loop or be a kernel's scalar argument.
ir::Result<bool> OrchestrationEmitter::EmitTensorExtent(const ir::AssignStmt& assign, const ir::Call& extent) {
  const auto* tensor = extent.args()[0]->As<ir::Var>();
  auto binding = tensor ? bindings_.find(tensor) : bindings_.end();
  if (binding == bindings_.end() || binding->second.ref.kind != rt::PlanTensorRef::Kind::Param)
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("tensor.extent reads an axis of a parameter of the orchestration, got '{}'",
                                 ir::PrintExpr(extent.args()[0])),
                     assign.span());
  const auto& var = assign.var();
  const auto axis = *ir::FindAttr<int64_t>(extent.kwargs(), "axis");
  Separate();
  after_scalar_ = true;
  const std::string name = names_.Take(var->name_hint());
  scalars_[var.get()] = name;
  body_ += fmt::format("{}{} = (int64_t){}.shapes[{}];\n", indent_, Declared("int64_t", name),
                       binding->second.cpp_name, axis);
  reads_.refs[tensor] = binding->second.ref;
  steps_->push_back(Step{ScalarStep{.var = var.get(), .value = assign.value(), .dtype = ir::DataType::INDEX}});
  return true;
}

// A read written inside a condition (`if pl.read(flags, [0]) > 0:`): read into a C++ variable first,
// which the condition's C++ names (the plan evaluates the read where the condition is evaluated).
ir::Result<bool> OrchestrationEmitter::HoistElementReads(const ir::ExprPtr& expr) {
  struct Reads final : ir::IRVisitor {
    std::vector<const ir::Call*> found;
    void VisitCall(const std::shared_ptr<const ir::Call>& call) override {
      if (call->is_op_call() && call->op()->name == "tensor.read") found.push_back(call.get());
      ir::IRVisitor::VisitCall(call);
    }
  } reads;
  reads.VisitExpr(expr);
  for (const ir::Call* read : reads.found) {
    auto name = EmitElementRead(*read, "element", read->type()->As<ir::ScalarType>()->dtype(), read->span());
    if (!name) return pypto::unexpected(name.error());
    read_names_[read] = *name;
  }
  return true;
}

// The C++ reading one element of an orchestration parameter into a new variable; its name.
ir::Result<std::string> OrchestrationEmitter::EmitElementRead(const ir::Call& read, const std::string& hint,
                                                              ir::DataType dtype, const ir::Span& span) {
  const auto* tensor = read.args()[0]->As<ir::Var>();
  auto binding = tensor ? bindings_.find(tensor) : bindings_.end();
  if (binding == bindings_.end())
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("orchestration code reads an element of '{}', which is not a tensor of the "
                                 "orchestration",
                                 tensor ? tensor->name_hint() : ir::PrintExpr(read.args()[0])),
                     span, "read the element inside the kernel that uses it");
  auto type = CppScalarType(dtype);
  if (!type)
    return MakeError(DiagnosticKind::Type,
                     fmt::format("orchestration scalar '{}' is {}; orchestration code holds integer, BOOL, FP32 and "
                                 "FP64 scalars only",
                                 hint, ir::DataTypeName(dtype)),
                     span);
  std::vector<std::string> indices;
  for (const auto& index : read.args()[1]->As<ir::TupleLiteral>()->elements()) {
    if (const ir::Var* unknown = UnknownScalar(index))
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("the index of this read uses '{}', which has no value here", unknown->name_hint()),
                       span);
    auto text = CppExpr(index);
    if (!text) return pypto::unexpected(text.error());
    indices.push_back(fmt::format("static_cast<uint32_t>({})", *text));
  }
  Separate();
  after_scalar_ = true;
  const std::string name = names_.Take(hint);
  body_ += fmt::format("{}uint32_t {}_index[{}] = {{{}}};\n", indent_, name, indices.size(), fmt::join(indices, ", "));
  body_ += fmt::format("{}{} = get_tensor_data<{}>({}, {}, {}_index);\n", indent_, Declared(*type, name), *type,
                       binding->second.cpp_name, indices.size(), name);
  reads_.refs[tensor] = binding->second.ref;
  element_reads_.emplace_back(binding->second.ref, &read);
  return name;
}

// The first variable of `expr` that is not an orchestration scalar defined so far.
const ir::Var* OrchestrationEmitter::UnknownScalar(const ir::ExprPtr& expr) const {
  struct Finder final : ir::IRVisitor {
    const std::unordered_map<const ir::Var*, std::string>& known;
    const std::unordered_map<const ir::Call*, std::string>& hoisted;  // element reads: values of their own
    const ir::Var* unknown = nullptr;
    Finder(const std::unordered_map<const ir::Var*, std::string>& k,
           const std::unordered_map<const ir::Call*, std::string>& h)
        : known(k), hoisted(h) {}
    void VisitVar(const std::shared_ptr<const ir::Var>& var) override {
      if (!unknown && !known.contains(var.get())) unknown = var.get();
    }
    void VisitCall(const std::shared_ptr<const ir::Call>& call) override {
      if (!hoisted.contains(call.get())) ir::IRVisitor::VisitCall(call);
    }
  } finder(scalars_, read_names_);
  finder.VisitExpr(expr);
  return finder.unknown;
}

// A call in an orchestration scalar expression other than a cast and a hoisted element read: its
// value exists only when the C++ runs, never while the plan is built.
const ir::Call* OrchestrationEmitter::RunTimeCall(const ir::ExprPtr& expr) const {
  struct Finder final : ir::IRVisitor {
    const std::unordered_map<const ir::Call*, std::string>& hoisted;
    const ir::Call* found = nullptr;
    explicit Finder(const std::unordered_map<const ir::Call*, std::string>& h) : hoisted(h) {}
    void VisitCall(const std::shared_ptr<const ir::Call>& call) override {
      if (!found && !AsScalarCast(*call) && !hoisted.contains(call.get())) found = call.get();
      if (!found) ir::IRVisitor::VisitCall(call);
    }
  } finder(read_names_);
  finder.VisitExpr(expr);
  return finder.found;
}

// An orchestration scalar expression as C++ (upstream's spelling: binary operations parenthesised).
ir::Result<std::string> OrchestrationEmitter::CppExpr(const ir::ExprPtr& expr) const {
  if (const auto* i = expr->As<ir::ConstInt>())
    return i->value() == std::numeric_limits<int64_t>::min() ? std::string("INT64_MIN")
                                                             : std::to_string(i->value());
  if (const auto* f = expr->As<ir::ConstFloat>()) {
    const auto dtype = f->type()->As<ir::ScalarType>()->dtype();
    if (!std::isfinite(f->value()))
      return MakeError(DiagnosticKind::Type, "a non-finite literal in orchestration code is not supported yet",
                       expr->span());
    if (dtype == ir::DataType::FP64) return FloatLiteral(f->value());
    return FloatLiteral(static_cast<float>(f->value())) + "f";
  }
  if (const auto* b = expr->As<ir::ConstBool>()) return std::string(b->value() ? "true" : "false");
  if (const auto* var = expr->As<ir::Var>()) {
    auto it = scalars_.find(var);
    if (it == scalars_.end())
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("'{}' is not an orchestration scalar known at compile time", var->name_hint()),
                       expr->span());
    return it->second;
  }
  if (const auto* call = expr->As<ir::Call>(); call && read_names_.contains(call)) return read_names_.at(call);
  if (const ir::Call* cast = AsScalarCast(*expr)) {
    auto type = CppScalarType(cast->type()->As<ir::ScalarType>()->dtype());
    auto value = CppExpr(cast->args()[0]);
    if (!value) return value;
    if (!type)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("a cast to {} is not supported in orchestration code", cast->type()->str()),
                       expr->span());
    return fmt::format("static_cast<{}>({})", *type, *value);
  }
  if (const auto* call = expr->As<ir::Call>(); call && call->is_op_call() && call->op()->name.starts_with("system."))
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("pl.{}() is not supported in orchestration code yet", call->op()->name),
                     expr->span(),
                     call->op()->name.starts_with("system.available_")
                         ? "give the launch width as a number (the simulated SoC has 24 clusters of 1 AIC and 2 AIV "
                           "on a2a3, 36 on a5)"
                         : "");
  const auto* binary = expr->As<ir::BinaryExpr>();
  if (!binary)
    return MakeError(DiagnosticKind::Syntax, "this expression is not supported in orchestration scalar code yet",
                     expr->span());
  auto lhs = CppExpr(binary->lhs());
  if (!lhs) return lhs;
  auto rhs = CppExpr(binary->rhs());
  if (!rhs) return rhs;
  const auto dtype = binary->type()->As<ir::ScalarType>()->dtype();
  const auto op = binary->op();
  auto type = CppScalarType(dtype);
  if (!type)
    return MakeError(DiagnosticKind::Type,
                     fmt::format("'{}' on {} is not supported in orchestration code", ir::BinaryOpSymbol(op),
                                 ir::DataTypeName(dtype)),
                     expr->span());
  switch (op) {
    case ir::BinaryOp::Min:
    case ir::BinaryOp::Max:
      return fmt::format("std::{}<{}>({}, {})", ir::BinaryOpSymbol(op), *type, *lhs, *rhs);
    case ir::BinaryOp::FloorDiv:
    case ir::BinaryOp::FloorMod:
      if (ir::IsFloat(dtype))
        return MakeError(DiagnosticKind::Type,
                         fmt::format("'{}' on floating-point scalars is not supported in orchestration code yet",
                                     ir::BinaryOpSymbol(op)),
                         expr->span());
      return fmt::format("({} {} {})", *lhs, op == ir::BinaryOp::FloorDiv ? "/" : "%", *rhs);
    case ir::BinaryOp::FloatDiv:
      // True division even when both operands are integers.
      return fmt::format("(static_cast<{0}>({1}) / static_cast<{0}>({2}))", *type, *lhs, *rhs);
    default: return fmt::format("({} {} {})", *lhs, ir::BinaryOpSymbol(op), *rhs);
  }
}

// A scalar argument that is not a literal: its C++ for add_scalar, once its type fits the parameter.
ir::Result<std::string> OrchestrationEmitter::ScalarArgCpp(const ir::ExprPtr& arg, ir::DataType dtype,
                                                           const std::string& what) const {
  const auto* scalar = arg->type()->As<ir::ScalarType>();
  if (!scalar)
    return MakeError(DiagnosticKind::Internal, fmt::format("{} is not a scalar", what), arg->span());
  if (const ir::Var* unknown = UnknownScalar(arg))
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("{} is computed from '{}', which is only known at run time; the task plan needs "
                                 "every scalar argument at compile time",
                                 what, unknown->name_hint()),
                     arg->span());
  auto text = CppExpr(arg);
  if (!text) return text;
  const auto given = scalar->dtype();
  if (dtype == ir::DataType::FP32 || dtype == ir::DataType::FP64) {
    if (given != dtype)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("{} is {}, but '{}' is {}", what, ir::DataTypeName(dtype), *text,
                                   ir::DataTypeName(given)),
                       arg->span());
    return fmt::format("to_u64({})", *text);
  }
  if (dtype == ir::DataType::BOOL || ir::IsInteger(dtype)) {
    if (ir::IsFloat(given))
      return MakeError(DiagnosticKind::Type,
                       fmt::format("{} is {}, but the floating-point value '{}' was passed", what,
                                   ir::DataTypeName(dtype), *text),
                       arg->span());
    return *text;
  }
  return MakeError(DiagnosticKind::Type,
                   fmt::format("{} is {}; kernel scalars of that dtype are not supported yet", what,
                               ir::DataTypeName(dtype)),
                   arg->span());
}

}  // namespace pypto::codegen_orch::detail
