#include "call_builder.h"

#include <fmt/format.h>

#include <algorithm>

namespace pypto::frontend {

using ir::DiagnosticKind;
using ir::MakeError;

CallBuilder::CallBuilder(std::string dsl_name, const ir::OpDef& op, ir::Span span)
    : dsl_name_(std::move(dsl_name)), op_(op), span_(std::move(span)), args_(op.max_args()) {}

ir::Result<bool> CallBuilder::Bind(const ir::OpParam& param, ArgValue value, const ir::Span& at) {
  if (param.is_attr) {
    if (std::any_of(kwargs_.begin(), kwargs_.end(), [&](const auto& kv) { return kv.first == param.name; }))
      return Twice(param, at);
    auto attr = ToAttr(param, value, at);
    if (!attr) return pypto::unexpected(attr.error());
    kwargs_.emplace_back(param.name, std::move(*attr));
    return true;
  }
  const auto* expr = std::get_if<ir::ExprPtr>(&value);
  if (!expr)
    return MakeError(DiagnosticKind::Type,
                     fmt::format("'{}' argument '{}' must be a value, got {}", dsl_name_, param.name,
                                 ir::OpAttrText(std::get<ir::OpAttr>(value))),
                     at);
  const size_t index = ArgIndex(param);
  if (args_[index]) return Twice(param, at);
  args_[index] = *expr;
  return true;
}

bool CallBuilder::Has(const ir::OpParam& param) const {
  if (param.is_attr)
    return std::any_of(kwargs_.begin(), kwargs_.end(), [&](const auto& kv) { return kv.first == param.name; });
  return args_[ArgIndex(param)] != nullptr;
}

ir::Result<ir::ExprPtr> CallBuilder::Build(const ir::Span& call_span) {
  size_t given = args_.size();
  while (given > 0 && !args_[given - 1]) --given;
  const auto names = op_.arg_names();
  for (size_t i = 0; i < std::max(given, op_.min_args()); ++i)
    if (i >= given || !args_[i])
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("'{}' is missing argument '{}'", dsl_name_, names[i]), span_);
  args_.resize(given);
  for (const auto& param : op_.params) {
    if (!param.is_attr || !param.required) continue;
    if (std::none_of(kwargs_.begin(), kwargs_.end(), [&](const auto& kv) { return kv.first == param.name; }))
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("'{}' is missing argument '{}'", dsl_name_, param.name), span_);
  }
  auto call = ir::OpRegistry::Get().CreateCall(op_.name, std::move(args_), std::move(kwargs_), call_span);
  if (!call) {
    auto error = call.error();
    error.message = fmt::format("{}: {}", dsl_name_, error.message);
    return pypto::unexpected(error);
  }
  return ir::ExprPtr(*call);
}

size_t CallBuilder::ArgIndex(const ir::OpParam& param) const {
  size_t index = 0;
  for (const auto& p : op_.params) {
    if (&p == &param) break;
    if (!p.is_attr) ++index;
  }
  return index;
}

pypto::unexpected<ir::Diagnostic> CallBuilder::Twice(const ir::OpParam& param, const ir::Span& at) const {
  return MakeError(DiagnosticKind::InvalidOperation,
                   fmt::format("'{}' got argument '{}' twice", dsl_name_, param.name), at);
}

ir::Result<ir::OpAttr> CallBuilder::ToAttr(const ir::OpParam& param, const ArgValue& value,
                                            const ir::Span& at) const {
  const ir::OpAttrKind kind = param.attr_kind;
  if (const auto* attr = std::get_if<ir::OpAttr>(&value)) {
    if (ir::KindOf(*attr) == kind) return *attr;
  } else {
    const ir::ExprPtr& expr = std::get<ir::ExprPtr>(value);
    if (const auto* i = expr->As<ir::ConstInt>()) {
      if (kind == ir::OpAttrKind::Int) return ir::OpAttr(i->value());
      if (kind == ir::OpAttrKind::Float) return ir::OpAttr(static_cast<double>(i->value()));
    }
    if (const auto* f = expr->As<ir::ConstFloat>(); f && kind == ir::OpAttrKind::Float) return ir::OpAttr(f->value());
    if (const auto* b = expr->As<ir::ConstBool>(); b && kind == ir::OpAttrKind::Bool) return ir::OpAttr(b->value());
  }
  return MakeError(DiagnosticKind::Type,
                   fmt::format("'{}' argument '{}' must be a {} known at compile time", dsl_name_, param.name,
                               ir::OpAttrKindName(kind)),
                   at);
}

}  // namespace pypto::frontend
