#include "type_resolver.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace pypto::frontend {
namespace {

using ir::DiagnosticKind;
using ir::MakeError;

ir::Result<ir::DataType> ResolveDtype(py::handle node, const SourceMap& map) {
  std::string name = DottedName(node);
  if (name.starts_with("pl.")) {
    if (auto dtype = ir::DataTypeFromName(name.substr(3))) return *dtype;
  }
  return MakeError(DiagnosticKind::Type, fmt::format("'{}' is not a dtype (expected e.g. pl.FP32)", name),
                   map.SpanOf(node));
}

ir::Result<ir::Shape> ResolveShape(py::handle node, const SourceMap& map) {
  if (!IsNode(node, "List") && !IsNode(node, "Tuple"))
    return MakeError(DiagnosticKind::Type, "a tensor shape must be a list of integers", map.SpanOf(node));
  ir::Shape shape;
  for (auto element : node.attr("elts")) {
    if (!IsNode(element, "Constant") || !py::isinstance<py::int_>(element.attr("value")))
      return MakeError(DiagnosticKind::Type, "tensor dimensions must be integer literals (dynamic shapes come later)",
                       map.SpanOf(element));
    shape.push_back(element.attr("value").cast<int64_t>());
  }
  return shape;
}

ir::Result<ir::TypePtr> ResolveTensor(py::handle node, const std::string& param, const TensorSpec* spec,
                                      const SourceMap& map) {
  if (DottedName(node) == "pl.Tensor") {
    if (!spec)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("parameter '{}' is a bare pl.Tensor but no tensor was passed for it", param),
                       map.SpanOf(node), "pass a torch.Tensor, or annotate pl.Tensor[[shape], dtype]");
    return std::make_shared<ir::TensorType>(spec->shape, spec->dtype);
  }
  if (IsNode(node, "Subscript") && DottedName(node.attr("value")) == "pl.Tensor") {
    py::handle slice = node.attr("slice");
    if (!IsNode(slice, "Tuple") || py::len(slice.attr("elts")) < 2)
      return MakeError(DiagnosticKind::Type, "expected pl.Tensor[[shape], dtype]", map.SpanOf(node));
    py::list elts = slice.attr("elts");
    auto shape = ResolveShape(elts[0], map);
    if (!shape) return pypto::unexpected(shape.error());
    auto dtype = ResolveDtype(elts[1], map);
    if (!dtype) return pypto::unexpected(dtype.error());
    if (spec && (spec->shape != *shape || spec->dtype != *dtype)) {
      return MakeError(DiagnosticKind::Type,
                       fmt::format("parameter '{}' is annotated pl.Tensor[[{}], pl.{}] but was passed a tensor of "
                                   "shape [{}] and dtype {}",
                                   param, fmt::join(*shape, ", "), ir::DataTypeName(*dtype),
                                   fmt::join(spec->shape, ", "), ir::DataTypeName(spec->dtype)),
                       map.SpanOf(node));
    }
    return std::make_shared<ir::TensorType>(*shape, *dtype);
  }
  return MakeError(DiagnosticKind::Type,
                   fmt::format("unsupported annotation for parameter '{}' (expected pl.Tensor, pl.Out[...] or "
                               "pl.InOut[...])",
                               param),
                   map.SpanOf(node));
}

}  // namespace

ir::Result<ResolvedParam> ResolveParam(py::handle annotation, const std::string& name, const TensorSpec* spec,
                                       const SourceMap& map) {
  if (annotation.is_none())
    return MakeError(DiagnosticKind::Type, fmt::format("parameter '{}' is missing a type annotation", name));
  ResolvedParam param;
  py::handle inner = annotation;
  if (IsNode(annotation, "Subscript")) {
    std::string wrapper = DottedName(annotation.attr("value"));
    if (wrapper == "pl.Out" || wrapper == "pl.InOut") {
      param.direction = wrapper == "pl.Out" ? ir::ParamDirection::Out : ir::ParamDirection::InOut;
      inner = annotation.attr("slice");
    }
  }
  auto type = ResolveTensor(inner, name, spec, map);
  if (!type) return pypto::unexpected(type.error());
  param.type = *type;
  return param;
}

}  // namespace pypto::frontend
