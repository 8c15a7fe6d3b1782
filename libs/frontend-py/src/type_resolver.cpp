#include "type_resolver.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace pypto::frontend {

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

namespace {

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
  if (IsNode(inner, "Subscript") && DottedName(inner.attr("value")) == "pl.Scalar") {
    if (param.direction != ir::ParamDirection::In)
      return MakeError(DiagnosticKind::Type, fmt::format("scalar parameter '{}' cannot be an output", name),
                       map.SpanOf(annotation), "return a tensor instead");
    auto dtype = ResolveDtype(inner.attr("slice"), map);
    if (!dtype) return pypto::unexpected(dtype.error());
    param.type = std::make_shared<ir::ScalarType>(*dtype);
    return param;
  }
  auto type = ResolveTensor(inner, name, spec, map);
  if (!type) return pypto::unexpected(type.error());
  param.type = *type;
  return param;
}

namespace {

// The memory space an annotation names: pl.Mem.Vec or pl.MemorySpace.Vec.
std::optional<ir::MemorySpace> SpaceOf(py::handle node) {
  std::string name = DottedName(node);
  for (std::string_view prefix : {"pl.Mem.", "pl.MemorySpace."})
    if (name.starts_with(prefix)) return ir::MemorySpaceFromName(std::string_view(name).substr(prefix.size()));
  return std::nullopt;
}

}  // namespace

ir::Result<bool> CheckDeclaredType(py::handle annotation, const std::string& name, const ir::TypePtr& actual,
                                   const SourceMap& map) {
  const ir::Span span = map.SpanOf(annotation);
  std::string head = IsNode(annotation, "Subscript") ? DottedName(annotation.attr("value")) : DottedName(annotation);
  auto mismatch = [&](const std::string& declared) {
    return MakeError(DiagnosticKind::Type,
                     fmt::format("'{}' is declared {} but the value assigned is {}", name, declared, actual->str()),
                     span);
  };
  if (head == "pl.Scalar") {
    const auto* scalar = actual->As<ir::ScalarType>();
    if (!IsNode(annotation, "Subscript")) return scalar ? ir::Result<bool>(true) : mismatch("a scalar");
    auto dtype = ResolveDtype(annotation.attr("slice"), map);
    if (!dtype) return pypto::unexpected(dtype.error());
    if (!scalar || scalar->dtype() != *dtype) return mismatch(fmt::format("pl.Scalar[pl.{}]", ir::DataTypeName(*dtype)));
    return true;
  }
  if (head != "pl.Tile" && head != "pl.Tensor") return true;  // other annotations are documentation
  const auto* shaped = head == "pl.Tile" ? static_cast<const ir::ShapedType*>(actual->As<ir::TileType>())
                                         : static_cast<const ir::ShapedType*>(actual->As<ir::TensorType>());
  if (!IsNode(annotation, "Subscript")) return shaped ? ir::Result<bool>(true) : mismatch(head);
  py::handle slice = annotation.attr("slice");
  if (!IsNode(slice, "Tuple") || py::len(slice.attr("elts")) < 2)
    return MakeError(DiagnosticKind::Type, fmt::format("expected {}[[shape], dtype]", head), span);
  py::list elts = slice.attr("elts");
  auto shape = ResolveShape(elts[0], map);
  if (!shape) return pypto::unexpected(shape.error());
  auto dtype = ResolveDtype(elts[1], map);
  if (!dtype) return pypto::unexpected(dtype.error());
  std::optional<ir::MemorySpace> space;
  if (py::len(elts) > 2) space = SpaceOf(elts[2]);
  std::string declared = fmt::format("{}[[{}], pl.{}{}]", head, fmt::join(*shape, ", "), ir::DataTypeName(*dtype),
                                     space ? fmt::format(", pl.Mem.{}", ir::MemorySpaceName(*space)) : "");
  if (!shaped || shaped->shape() != *shape || shaped->dtype() != *dtype) return mismatch(declared);
  if (const auto* tile = actual->As<ir::TileType>(); tile && space && tile->memory_space() != *space)
    return mismatch(declared);
  return true;
}

}  // namespace pypto::frontend
