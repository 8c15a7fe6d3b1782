// LoopExpander: evaluating orchestration scalar expressions in one iteration (arithmetic with the
// C++ semantics the emitted code has, element reads of the run's tensors) and encoding the
// values as kernel scalar arguments. Separate from the steps, which only ask for values.
#include "loop_expander.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <limits>
#include <stdexcept>

#include "pypto/ir/op_registry.h"
#include "tensor_element.h"

namespace pypto::codegen_orch::detail {

using ir::DiagnosticKind;
using ir::MakeError;

// `pl.tensor.read(t, [i, ...])`: the element as the tasks submitted before the read leave it. When
// one of them writes t's buffer, the run executes every task expanded so far first (a staged run);
// a read of an intermediate no task has written yet is refused, as its bytes are undefined.
ir::Result<Value> LoopExpander::ReadTensor(const ir::Call& read) const {
  read_element_ = true;
  const auto* tensor = read.args()[0]->As<ir::Var>();
  auto bound = reads_ && tensor ? reads_->refs.find(tensor) : decltype(reads_->refs)::const_iterator{};
  if (!reads_ || !tensor || bound == reads_->refs.end() || !reads_->source)
    return MakeError(DiagnosticKind::Internal, "a tensor read has no tensor in the loop expansion", read.span());
  const std::string& name = tensor->name_hint();
  const rt::PlanTensorRef buffer = BufferOf(bound->second);
  if (buffer.kind == rt::PlanTensorRef::Kind::Intermediate && !written_intermediates_.contains(buffer.index) &&
      !plan_.intermediates[buffer.index].initial_bits)
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("orchestration code reads '{}'{} before any task writes it: a tensor made by "
                                 "pl.create_tensor holds undefined values until a kernel writes them",
                                 name, Where()),
                     read.span(), "call the kernel that computes the value first, or give the tensor an init_value");
  if (pending_writes_.contains({buffer.kind, buffer.index})) {
    allocated_ = true;
    if (auto ran = reads_->source->RunPending(name, read.span()); !ran) return pypto::unexpected(ran.error());
    pending_writes_.clear();
  }
  std::vector<int64_t> indices;
  for (const auto& index : read.args()[1]->As<ir::TupleLiteral>()->elements()) {
    auto value = Eval(index);
    if (!value) return value;
    indices.push_back(value->i);
  }
  auto memory = TensorOf(bound->second, name, read.span());
  if (!memory) return pypto::unexpected(memory.error());
  auto element = ReadElement(*memory, indices, name, read.span());
  if (!element) return pypto::unexpected(element.error());
  return Value{.is_float = element->is_float, .i = element->i, .f = element->f};
}

// `tensor.extent(x, axis=a)`: the extent of the run's tensor (a program compiled for every extent of
// a pl.dynamic dimension is expanded at each run, and only then).
ir::Result<Value> LoopExpander::TensorExtent(const ir::Call& extent) const {
  const auto* tensor = extent.args()[0]->As<ir::Var>();
  auto bound = reads_ && tensor ? reads_->refs.find(tensor) : decltype(reads_->refs)::const_iterator{};
  if (!reads_ || !tensor || bound == reads_->refs.end() || !reads_->source)
    return MakeError(DiagnosticKind::Internal, "a tensor extent has no tensor in the loop expansion", extent.span());
  auto memory = TensorOf(bound->second, tensor->name_hint(), extent.span());
  if (!memory) return pypto::unexpected(memory.error());
  const auto axis = *ir::FindAttr<int64_t>(extent.kwargs(), "axis");
  if (axis < 0 || axis >= static_cast<int64_t>(memory->ndims))
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("'{}' has {} axes; the program reads the extent of axis {}", tensor->name_hint(),
                                 memory->ndims, axis),
                     extent.span());
  return Value{.i = static_cast<int64_t>(memory->shapes[axis])};
}

// The memory a plan tensor names in this iteration: its buffer, through the views it is made of.
ir::Result<rt::ChipTensor> LoopExpander::TensorOf(rt::PlanTensorRef ref, const std::string& name,
                                                  const ir::Span& span) const {
  ref = Current(ref);
  allocated_ |= ref.kind == rt::PlanTensorRef::Kind::Intermediate;
  if (ref.kind != rt::PlanTensorRef::Kind::View) return reads_->source->Buffer(ref, name, span);
  const rt::PlanView& view = views_[ref.index];
  auto base = TensorOf(view.base, name, span);
  if (!base) return base;
  try {
    if (view.swapped_axes) return rt::TransposedTensor(*base, view.swapped_axes->first, view.swapped_axes->second);
    if (view.offsets.empty()) return rt::ReshapedTensor(*base, view.shape);
    return rt::SlicedTensor(*base, view.shape, view.offsets);
  } catch (const std::invalid_argument& error) {
    return MakeError(DiagnosticKind::InvalidOperation, fmt::format("reads '{}': {}", name, error.what()), span);
  }
}

ir::Result<Value> LoopExpander::Eval(const ir::ExprPtr& expr) const {
  if (const auto* i = expr->As<ir::ConstInt>()) return Value{.i = i->value()};
  if (const auto* call = expr->As<ir::Call>(); call && call->is_op_call() && call->op()->name == "tensor.read")
    return ReadTensor(*call);
  if (const auto* call = expr->As<ir::Call>(); call && call->is_op_call() && call->op()->name == "tensor.extent")
    return TensorExtent(*call);
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
