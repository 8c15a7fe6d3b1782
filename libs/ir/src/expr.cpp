#include "pypto/ir/expr.h"

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
           std::vector<ArgDirection> arg_directions)
    : Expr(kKind, std::move(span), std::move(type)),
      callee_(std::move(callee)),
      args_(std::move(args)),
      arg_directions_(std::move(arg_directions)) {}

const std::string& Call::target_name() const { return op_ ? op_->name : callee_; }

std::optional<int64_t> AsConstInt(const ExprPtr& expr) {
  if (const auto* constant = expr ? expr->As<ConstInt>() : nullptr) return constant->value();
  return std::nullopt;
}

}  // namespace pypto::ir
