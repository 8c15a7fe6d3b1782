#include "pypto/ir/expr.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>

#include "pypto/ir/op_registry.h"

namespace pypto::ir {
namespace {

std::atomic<uint64_t> next_var_id{1};

TypePtr ScalarOf(DataType dtype) { return std::make_shared<ScalarType>(dtype); }

}  // namespace

Var::Var(std::string name_hint, TypePtr type, Span span)
    : Expr(kKind, std::move(span), std::move(type)), name_hint_(std::move(name_hint)), id_(next_var_id++) {}

ConstInt::ConstInt(int64_t value, DataType dtype, Span span)
    : Expr(kKind, std::move(span), ScalarOf(dtype)), value_(value) {}

ConstFloat::ConstFloat(double value, DataType dtype, Span span)
    : Expr(kKind, std::move(span), ScalarOf(dtype)), value_(value) {}

ConstBool::ConstBool(bool value, Span span) : Expr(kKind, std::move(span), ScalarOf(DataType::BOOL)), value_(value) {}

namespace {
TypePtr TupleTypeOf(const std::vector<ExprPtr>& elements) {
  std::vector<TypePtr> types;
  types.reserve(elements.size());
  for (const auto& element : elements) types.push_back(element->type());
  return std::make_shared<TupleType>(std::move(types));
}
}  // namespace

TupleLiteral::TupleLiteral(std::vector<ExprPtr> elements, Span span)
    : Expr(kKind, std::move(span), TupleTypeOf(elements)), elements_(std::move(elements)) {}

const char* ArgDirectionName(ArgDirection direction) {
  switch (direction) {
    case ArgDirection::Input: return "Input";
    case ArgDirection::Output: return "Output";
    case ArgDirection::InOut: return "InOut";
    case ArgDirection::OutputExisting: return "OutputExisting";
    case ArgDirection::NoDep: return "NoDep";
    case ArgDirection::Scalar: return "Scalar";
  }
  return "?";
}

Call::Call(const OpDef* op, std::vector<ExprPtr> args, Kwargs kwargs, TypePtr type, Span span)
    : Expr(kKind, std::move(span), std::move(type)), op_(op), args_(std::move(args)), kwargs_(std::move(kwargs)) {}

Call::Call(std::string callee, std::vector<ExprPtr> args, TypePtr type, Span span,
           std::vector<ArgDirection> arg_directions, Kwargs kwargs, LaunchOrder order, ExprPtr core_num)
    : Expr(kKind, std::move(span), std::move(type)),
      callee_(std::move(callee)),
      args_(std::move(args)),
      kwargs_(std::move(kwargs)),
      arg_directions_(std::move(arg_directions)),
      order_(std::move(order)),
      core_num_(std::move(core_num)) {}

const std::string& Call::target_name() const { return op_ ? op_->name : callee_; }

std::optional<int64_t> AsConstInt(const ExprPtr& expr) {
  if (const auto* constant = expr ? expr->As<ConstInt>() : nullptr) return constant->value();
  return std::nullopt;
}

}  // namespace pypto::ir

namespace pypto::ir {

const char* BinaryOpSymbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Mul: return "*";
    case BinaryOp::FloorDiv: return "//";
    case BinaryOp::FloorMod: return "%";
    case BinaryOp::FloatDiv: return "/";
    case BinaryOp::Min: return "min";
    case BinaryOp::Max: return "max";
    case BinaryOp::Shl: return "<<";
    case BinaryOp::Shr: return ">>";
    case BinaryOp::Eq: return "==";
    case BinaryOp::Ne: return "!=";
    case BinaryOp::Lt: return "<";
    case BinaryOp::Le: return "<=";
    case BinaryOp::Gt: return ">";
    case BinaryOp::Ge: return ">=";
  }
  return "?";
}

bool IsComparison(BinaryOp op) { return op >= BinaryOp::Eq; }

BinaryExpr::BinaryExpr(BinaryOp op, ExprPtr lhs, ExprPtr rhs, TypePtr type, Span span)
    : Expr(kKind, std::move(span), std::move(type)), op_(op), lhs_(std::move(lhs)), rhs_(std::move(rhs)) {}

namespace {

// Python semantics: floor division and a modulo with the sign of the divisor.
int64_t FloorDivide(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
int64_t FloorModulo(int64_t a, int64_t b) { return a - FloorDivide(a, b) * b; }

std::optional<int64_t> FoldInts(BinaryOp op, int64_t a, int64_t b) {
  switch (op) {
    case BinaryOp::Add: return a + b;
    case BinaryOp::Sub: return a - b;
    case BinaryOp::Mul: return a * b;
    case BinaryOp::FloorDiv: return FloorDivide(a, b);
    case BinaryOp::FloorMod: return FloorModulo(a, b);
    case BinaryOp::Min: return std::min(a, b);
    case BinaryOp::Max: return std::max(a, b);
    case BinaryOp::Shl: return static_cast<int64_t>(static_cast<uint64_t>(a) << b);
    case BinaryOp::Shr: return a >> b;
    default: return std::nullopt;
  }
}

bool IsShift(BinaryOp op) { return op == BinaryOp::Shl || op == BinaryOp::Shr; }

}  // namespace

namespace {

std::optional<double> AsConstNumber(const ExprPtr& expr) {
  if (const auto* f = expr->As<ConstFloat>()) return f->value();
  if (const auto* i = expr->As<ConstInt>()) return static_cast<double>(i->value());
  return std::nullopt;
}

// Only the arithmetic whose float result is unambiguous; division by zero is left to run time.
std::optional<double> FoldFloats(BinaryOp op, double l, double r) {
  switch (op) {
    case BinaryOp::Add: return l + r;
    case BinaryOp::Sub: return l - r;
    case BinaryOp::Mul: return l * r;
    case BinaryOp::FloatDiv: return r == 0 ? std::nullopt : std::optional<double>(l / r);
    case BinaryOp::Min: return std::min(l, r);
    case BinaryOp::Max: return std::max(l, r);
    default: return std::nullopt;
  }
}

}  // namespace

Result<ExprPtr> MakeBinary(BinaryOp op, const ExprPtr& lhs, const ExprPtr& rhs, const Span& span) {
  const auto* left = lhs->type()->As<ScalarType>();
  const auto* right = rhs->type()->As<ScalarType>();
  if (!left || !right) {
    return MakeError(DiagnosticKind::Type,
                     fmt::format("'{}' needs scalar operands, got {} and {}", BinaryOpSymbol(op), lhs->type()->str(),
                                 rhs->type()->str()),
                     span);
  }
  auto l = AsConstInt(lhs), r = AsConstInt(rhs);
  if ((op == BinaryOp::FloorDiv || op == BinaryOp::FloorMod) && r == 0)
    return MakeError(DiagnosticKind::InvalidOperation, "integer division by zero", span);
  if (IsShift(op)) {
    if (!IsInteger(left->dtype()) || !IsInteger(right->dtype()))
      return MakeError(DiagnosticKind::Type,
                       fmt::format("'{}' shifts integers, got {} and {}", BinaryOpSymbol(op), lhs->type()->str(),
                                   rhs->type()->str()),
                       span);
    if (r && (*r < 0 || *r >= 64))
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("shift count {} is out of range; it must be in [0, 64)", *r), span);
  }
  if (l && r) {
    if (auto folded = FoldInts(op, *l, *r)) return ExprPtr(std::make_shared<ConstInt>(*folded, left->dtype(), span));
  }
  DataType dtype = left->dtype();
  if (IsComparison(op)) dtype = DataType::BOOL;
  else if (op == BinaryOp::FloatDiv || IsFloat(right->dtype())) dtype = IsFloat(dtype) ? dtype : DataType::FP32;
  // Float arithmetic on literals folds as Python computes it (`1.0 / 64` is 0.015625).
  if (IsFloat(dtype)) {
    auto lf = AsConstNumber(lhs), rf = AsConstNumber(rhs);
    if (lf && rf)
      if (auto folded = FoldFloats(op, *lf, *rf)) return ExprPtr(std::make_shared<ConstFloat>(*folded, dtype, span));
  }
  return ExprPtr(std::make_shared<BinaryExpr>(op, lhs, rhs, std::make_shared<ScalarType>(dtype), span));
}

}  // namespace pypto::ir
