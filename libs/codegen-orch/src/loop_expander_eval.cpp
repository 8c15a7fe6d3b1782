// LoopExpander: evaluating orchestration scalar expressions in one iteration (arithmetic with the
// C++ semantics the emitted code has, element reads of the caller's tensors) and encoding the
// values as kernel scalar arguments. Separate from the steps, which only ask for values.
#include "loop_expander.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <limits>

#include "pypto/ir/op_registry.h"
#include "tensor_element.h"

namespace pypto::codegen_orch::detail {

using ir::DiagnosticKind;
using ir::MakeError;

// `pl.tensor.read(t, [i, ...])` of a parameter, from the tensor the caller passed. A tensor a task of
// this run writes before the read is refused: the plan is expanded before any task runs.
ir::Result<Value> LoopExpander::ReadTensor(const ir::Call& read) const {
  const auto* tensor = read.args()[0]->As<ir::Var>();
  auto param = reads_ && tensor ? reads_->params.find(tensor) : decltype(reads_->params)::const_iterator{};
  if (!reads_ || !tensor || param == reads_->params.end() || reads_->tensors.empty())
    return MakeError(DiagnosticKind::Internal, "a tensor read has no tensor in the loop expansion", read.span());
  if (written_params_.contains(param->second))
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("orchestration code reads '{}' after a kernel writes it{}; the task plan is built "
                                 "from the tensors as they are passed, before any kernel runs",
                                 tensor->name_hint(), Where()),
                     read.span(), "read the value before the kernel that writes the tensor is called");
  std::vector<int64_t> indices;
  for (const auto& index : read.args()[1]->As<ir::TupleLiteral>()->elements()) {
    auto value = Eval(index);
    if (!value) return value;
    indices.push_back(value->i);
  }
  auto element = ReadElement(reads_->tensors[param->second], indices, tensor->name_hint(), read.span());
  if (!element) return pypto::unexpected(element.error());
  return Value{.is_float = element->is_float, .i = element->i, .f = element->f};
}

ir::Result<Value> LoopExpander::Eval(const ir::ExprPtr& expr) const {
  if (const auto* i = expr->As<ir::ConstInt>()) return Value{.i = i->value()};
  if (const auto* call = expr->As<ir::Call>(); call && call->is_op_call() && call->op()->name == "tensor.read")
    return ReadTensor(*call);
  if (const auto* f = expr->As<ir::ConstFloat>()) return Value{.is_float = true, .f = f->value()};
  if (const auto* b = expr->As<ir::ConstBool>()) return Value{.i = b->value()};
  if (const auto* var = expr->As<ir::Var>()) {
    auto it = values_.find(var);
    if (it == values_.end())
      return MakeError(DiagnosticKind::Internal,
                       fmt::format("'{}' has no value in the loop expansion", var->name_hint()), expr->span());
    return it->second;
  }
  if (const ir::Call* cast = AsScalarCast(*expr)) {
    auto value = Eval(cast->args()[0]);
    if (!value) return value;
    return Narrow(*value, cast->type()->As<ir::ScalarType>()->dtype());
  }
  const auto* binary = expr->As<ir::BinaryExpr>();
  if (!binary)
    return MakeError(DiagnosticKind::Internal, "an orchestration scalar expression cannot be evaluated",
                     expr->span());
  auto lhs = Eval(binary->lhs());
  if (!lhs) return lhs;
  auto rhs = Eval(binary->rhs());
  if (!rhs) return rhs;
  const auto dtype = binary->type()->As<ir::ScalarType>()->dtype();
  const auto op = binary->op();
  if (ir::IsComparison(op)) {
    const bool floats = lhs->is_float || rhs->is_float;
    return Value{.i = floats ? ir::EvaluateComparison(op, lhs->AsDouble(), rhs->AsDouble())
                             : ir::EvaluateComparison(op, lhs->i, rhs->i)};
  }
  if (ir::IsFloat(dtype)) {
    const double l = lhs->AsDouble(), r = rhs->AsDouble();
    double result = 0;
    switch (op) {
      case ir::BinaryOp::Add: result = l + r; break;
      case ir::BinaryOp::Sub: result = l - r; break;
      case ir::BinaryOp::Mul: result = l * r; break;
      case ir::BinaryOp::FloatDiv:
        if (r == 0) return Failure(*binary, fmt::format("divides {} by zero", l));
        result = l / r;
        break;
      case ir::BinaryOp::Min: result = std::min(l, r); break;
      case ir::BinaryOp::Max: result = std::max(l, r); break;
      default: return Failure(*binary, "is not supported on floating-point values");
    }
    return Narrow(Value{.is_float = true, .f = result}, dtype);
  }
  const int64_t l = lhs->i, r = rhs->i;
  int64_t result = 0;
  bool overflow = false;
  switch (op) {
    case ir::BinaryOp::Add: overflow = __builtin_add_overflow(l, r, &result); break;
    case ir::BinaryOp::Sub: overflow = __builtin_sub_overflow(l, r, &result); break;
    case ir::BinaryOp::Mul: overflow = __builtin_mul_overflow(l, r, &result); break;
    case ir::BinaryOp::FloorDiv:
    case ir::BinaryOp::FloorMod: {
      if (r == 0) return Failure(*binary, fmt::format("divides {} by zero", l));
      if (l == std::numeric_limits<int64_t>::min() && r == -1) return Failure(*binary, "overflows 64 bits");
      // The C++ divides with truncation; Python floors. They agree unless the signs differ.
      if (l % r != 0 && ((l < 0) != (r < 0)))
        return Failure(*binary, fmt::format("divides {} by {}; '//' and '%' with a negative operand are not "
                                            "supported in orchestration code yet",
                                            l, r));
      result = op == ir::BinaryOp::FloorDiv ? l / r : l % r;
      break;
    }
    case ir::BinaryOp::Min: result = std::min(l, r); break;
    case ir::BinaryOp::Max: result = std::max(l, r); break;
    case ir::BinaryOp::Shl:
    case ir::BinaryOp::Shr:
      if (r < 0 || r >= 64) return Failure(*binary, fmt::format("shifts by {}, outside [0, 64)", r));
      result = op == ir::BinaryOp::Shl ? static_cast<int64_t>(static_cast<uint64_t>(l) << r) : l >> r;
      break;
    default: return Failure(*binary, "is not supported on integers");
  }
  if (overflow) return Failure(*binary, fmt::format("overflows 64 bits ({} {} {})", l, ir::BinaryOpSymbol(op), r));
  return Value{.i = result};
}

pypto::unexpected<ir::Diagnostic> LoopExpander::Failure(const ir::BinaryExpr& binary, const std::string& what) const {
  return MakeError(DiagnosticKind::InvalidOperation,
                   fmt::format("'{}' in orchestration code {}{}", ir::BinaryOpSymbol(binary.op()), what, Where()),
                   binary.span());
}

// The 64-bit pattern of a scalar argument, as EncodeScalar gives it for a literal.
ir::Result<uint64_t> LoopExpander::Encode(const Value& value, const ScalarOperand& scalar, const ir::Expr& arg) const {
  const auto dtype = scalar.dtype;
  if (dtype == ir::DataType::FP64) return std::bit_cast<uint64_t>(value.AsDouble());
  if (dtype == ir::DataType::FP32) return uint64_t{std::bit_cast<uint32_t>(static_cast<float>(value.AsDouble()))};
  const int64_t v = value.i;
  if (dtype == ir::DataType::BOOL) {
    if (v != 0 && v != 1)
      return MakeError(DiagnosticKind::Type, fmt::format("{} is BOOL, but {} was passed{}", scalar.what, v, Where()),
                       arg.span());
    return static_cast<uint64_t>(v);
  }
  if (ir::DataTypeBits(dtype) < 64) {
    const auto [lowest, highest] = ir::IntegerRange(dtype);
    if (v < lowest || v > highest)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("{} is {}, which cannot hold {}{}", scalar.what, ir::DataTypeName(dtype), v,
                                   Where()),
                       arg.span());
  }
  return static_cast<uint64_t>(v);
}

}  // namespace pypto::codegen_orch::detail
