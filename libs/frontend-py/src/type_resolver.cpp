#include "type_resolver.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "annotated_extents.h"
#include "pypto/ir/dynamic_extent.h"
#include "pypto/ir/row_merge.h"

namespace pypto::frontend {

using ir::DiagnosticKind;
using ir::MakeError;

std::optional<ir::DataType> DtypeOf(py::handle node, const Constants* constants) {
  std::string name = DottedName(node);
  if (name.starts_with("pl.")) return ir::DataTypeFromName(name.substr(3));
  if (IsNode(node, "Name") && constants)
    if (auto it = constants->find(name); it != constants->end())
      if (const auto* dtype = std::get_if<ir::DataType>(&it->second)) return *dtype;
  return std::nullopt;
}

ir::Result<ir::DataType> ResolveDtype(py::handle node, const SourceMap& map, const Constants* constants) {
  if (auto dtype = DtypeOf(node, constants)) return *dtype;
  std::string name = DottedName(node);
  return MakeError(DiagnosticKind::Type, fmt::format("'{}' is not a dtype (expected e.g. pl.FP32)", name),
                   map.SpanOf(node));
}

namespace {

// A dimension `scale * D + offset` of a `pl.dynamic` dimension D: `M`, `M * 2`, `2 * M`, `M + 1`.
struct DynamicExtent {
  std::string name;  // D; empty for a number
  int64_t scale = 1;
  int64_t offset = 0;
  std::string written;  // as the annotation writes it
};

// A shape as annotated: each dimension a number, or of a `pl.dynamic` dimension (its extent left 0).
struct AnnotatedShape {
  ir::Shape dims;
  std::vector<DynamicExtent> dynamic;  // parallel to dims
  std::vector<py::handle> nodes;       // parallel to dims: where each is written
  // The dimensions as the annotation writes them: numbers, and the dynamic ones as written.
  std::vector<std::string> Written() const {
    std::vector<std::string> written;
    for (size_t d = 0; d < dims.size(); ++d)
      written.push_back(dynamic[d].name.empty() ? std::to_string(dims[d]) : dynamic[d].written);
    return written;
  }
};

// An integer dimension written as a literal, a constant's name, or arithmetic of those
// (`H * HEAD_DIM`, `ROPE_DIM // 2`); nullopt for anything else.
std::optional<int64_t> StaticDim(py::handle node, const Constants* constants) {
  if (IsNode(node, "Constant") && py::isinstance<py::int_>(node.attr("value")) &&
      !py::isinstance<py::bool_>(node.attr("value")))
    return node.attr("value").cast<int64_t>();
  // A name, or an attribute of a config object (`M.hidden_size`), which the JIT passes by its dotted name.
  if ((IsNode(node, "Name") || IsNode(node, "Attribute")) && constants) {
    auto it = constants->find(DottedName(node));
    if (it != constants->end() && std::holds_alternative<int64_t>(it->second)) return std::get<int64_t>(it->second);
    return std::nullopt;
  }
  if (IsNode(node, "UnaryOp") && NodeType(node.attr("op")) == "USub") {
    auto operand = StaticDim(node.attr("operand"), constants);
    if (operand) return -*operand;
    return std::nullopt;
  }
  if (!IsNode(node, "BinOp")) return std::nullopt;
  auto lhs = StaticDim(node.attr("left"), constants), rhs = StaticDim(node.attr("right"), constants);
  if (!lhs || !rhs) return std::nullopt;
  const std::string op = NodeType(node.attr("op"));
  if (op == "Add") return *lhs + *rhs;
  if (op == "Sub") return *lhs - *rhs;
  if (op == "Mult") return *lhs * *rhs;
  if ((op == "FloorDiv" || op == "Mod") && *rhs != 0) {
    // Python's floor division and modulo (the sign follows the divisor).
    int64_t quotient = *lhs / *rhs;
    if ((*lhs % *rhs != 0) && ((*lhs < 0) != (*rhs < 0))) --quotient;
    return op == "FloorDiv" ? quotient : *lhs - quotient * *rhs;
  }
  return std::nullopt;
}

// The `pl.dynamic` dimension a name stands for, if it is one; or an attribute of a config object
// (`D.block_table_flat` in pypto-lib's Qwen3 models), which the JIT passes by its dotted name.
const DynamicDim* DynamicDimNamed(py::handle node, const Constants* constants) {
  if (!(IsNode(node, "Name") || IsNode(node, "Attribute")) || !constants) return nullptr;
  auto it = constants->find(DottedName(node));
  return it == constants->end() ? nullptr : std::get_if<DynamicDim>(&it->second);
}

// `M`, `M * 2`, `2 * M`, `M + 1`, `M - 1` over a `pl.dynamic` dimension M: what a passed extent
// determines M from. nullopt for anything else.
std::optional<DynamicExtent> LinearDynamicDim(py::handle node, const Constants* constants) {
  if (const auto* dim = DynamicDimNamed(node, constants)) return DynamicExtent{.name = dim->name, .written = dim->name};
  if (!IsNode(node, "BinOp")) return std::nullopt;
  const std::string op = NodeType(node.attr("op"));
  py::handle left = node.attr("left"), right = node.attr("right");
  const DynamicDim* dim = DynamicDimNamed(left, constants);
  std::optional<int64_t> constant = StaticDim(right, constants);
  if (!dim && op != "Sub") {  // `2 * M`, `1 + M`
    dim = DynamicDimNamed(right, constants);
    constant = StaticDim(left, constants);
  }
  if (!dim || !constant) return std::nullopt;
  DynamicExtent extent{.name = dim->name};
  if (op == "Mult" && *constant > 0) extent.scale = *constant;
  else if (op == "Add") extent.offset = *constant;
  else if (op == "Sub") extent.offset = -*constant;
  else return std::nullopt;
  extent.written = py::module_::import("ast").attr("unparse")(node).cast<std::string>();
  return extent;
}

// Dimensions are integer literals, the names of integer constants (module globals, closure
// variables) and arithmetic of those: `pl.Tensor[[ROWS, H * HEAD_DIM], pl.FP32]`, or the names of
// `pl.dynamic` dimensions.
ir::Result<AnnotatedShape> ReadShape(py::handle node, const SourceMap& map, const Constants* constants) {
  AnnotatedShape shape;
  // `pl.Tensor[shape, pl.FP32]` with `shape = [4, 1, 8]` from the function that builds the program.
  if (IsNode(node, "Name") && constants) {
    auto it = constants->find(node.attr("id").cast<std::string>());
    if (it != constants->end() && std::holds_alternative<std::vector<int64_t>>(it->second)) {
      for (int64_t dim : std::get<std::vector<int64_t>>(it->second)) {
        shape.nodes.push_back(node);
        shape.dims.push_back(dim);
        shape.dynamic.emplace_back();
      }
      return shape;
    }
  }
  if (!IsNode(node, "List") && !IsNode(node, "Tuple"))
    return MakeError(DiagnosticKind::Type, "a tensor shape must be a list of integers", map.SpanOf(node),
                     "write the dimensions as a list, or name a list of integers defined where the program is");
  for (auto element : node.attr("elts")) {
    shape.nodes.push_back(element);
    if (DottedName(element) == ir::kDynamicExtentName) {  // a printed program's dynamic axis
      shape.dims.push_back(ir::kDynamicExtent);
      shape.dynamic.emplace_back();
      continue;
    }
    if (IsNode(element, "Name") && constants) {
      auto it = constants->find(element.attr("id").cast<std::string>());
      if (it != constants->end() && std::holds_alternative<int64_t>(it->second)) {
        shape.dims.push_back(std::get<int64_t>(it->second));
        shape.dynamic.emplace_back();
        continue;
      }
    }
    if (auto dynamic = LinearDynamicDim(element, constants)) {
      shape.dims.push_back(0);
      shape.dynamic.push_back(std::move(*dynamic));
      continue;
    }
    auto dim = StaticDim(element, constants);
    if (!dim && IsNode(element, "Name"))
      return MakeError(DiagnosticKind::Type,
                       fmt::format("dimension '{}' is not known at compile time", element.attr("id").cast<std::string>()),
                       map.SpanOf(element),
                       "a dimension is an integer literal, an integer constant (a module or closure variable, or a "
                       "variable of the body assigned one) or arithmetic of them, or a pl.dynamic dimension");
    if (!dim)
      return MakeError(DiagnosticKind::Type,
                       "tensor dimensions must be integer literals, integer constants (or arithmetic of them), "
                       "pl.dynamic dimensions or one of those times, plus or minus a constant",
                       map.SpanOf(element));
    shape.dims.push_back(*dim);
    shape.dynamic.emplace_back();
  }
  return shape;
}

// A shape with no dynamic dimensions (annotations outside a specialised parameter).
ir::Result<ir::Shape> ResolveShape(py::handle node, const SourceMap& map, const Constants* constants) {
  auto shape = ReadShape(node, map, constants);
  if (!shape) return pypto::unexpected(shape.error());
  for (size_t d = 0; d < shape->dims.size(); ++d)
    if (!shape->dynamic[d].name.empty())
      return MakeError(DiagnosticKind::Type,
                       fmt::format("the dynamic dimension '{}' has no extent here: only the tensor parameters "
                                   "of a function (a @pl.jit entry, a @pl.program function called with tensors, or "
                                   "a @pl.program's entry when it runs) give it one",
                                   shape->dynamic[d].name),
                       map.SpanOf(shape->nodes[d]),
                       "a dimension shared by parameters that disagree on it has no single extent either");
  return shape->dims;
}

// A dimension the JIT passed unbound (a program compiled once for every extent): the axis stays
// dynamic, and the first parameter naming the dimension is where the entry reads its extent. Only a
// bare name is generic; `M * 2` and the like need the extent, which the JIT then passes (its
// fallback catches this error: keep "needs a static extent" in it).
ir::Result<bool> BindUnboundDim(AnnotatedShape& shape, size_t d, const std::string& param, const SourceMap& map,
                                DynamicBindings* bindings) {
  const DynamicExtent& dynamic = shape.dynamic[d];
  auto known = bindings ? bindings->find(dynamic.name) : DynamicBindings::iterator{};
  // An inline function's own parameters may label another axis with the name, which the caller's
  // variable does not read; unless the caller passes only this dimension unbound, whose extent is
  // then the only one an unbound axis can have.
  const auto unbound = bindings ? std::ranges::count_if(*bindings, [](const auto& entry) {
    return entry.second.extent == ir::kDynamicExtent;
  }) : 0;
  const bool clash = bindings && known != bindings->end() &&
                     (known->second.extent != ir::kDynamicExtent || (known->second.inherited && unbound != 1));
  if (dynamic.scale != 1 || dynamic.offset != 0 || !bindings || clash)
    return MakeError(DiagnosticKind::Type,
                     fmt::format("parameter '{}' has the dimension {}, which needs a static extent", param,
                                 dynamic.written),
                     map.SpanOf(shape.nodes[d]), "pass a tensor: the program is compiled for its extent");
  shape.dims[d] = ir::kDynamicExtent;
  auto [it, fresh] = bindings->emplace(dynamic.name, DynamicBinding{.extent = ir::kDynamicExtent, .param = param,
                                                                    .axis = static_cast<int64_t>(d)});
  it->second.axes.emplace_back(param, static_cast<int64_t>(d));
  return true;
}

// Gives each dynamic dimension of `shape` the passed tensor's extent, checked against the extent an
// earlier parameter bound the same name to.
ir::Result<bool> BindDynamicDims(AnnotatedShape& shape, const std::string& param, const TensorSpec* spec,
                                 const SourceMap& map, DynamicBindings* bindings, DynamicPolicy policy) {
  for (size_t d = 0; d < shape.dims.size(); ++d) {
    const DynamicExtent& dynamic = shape.dynamic[d];
    const std::string& name = dynamic.name;
    if (name.empty()) continue;
    const ir::Span span = map.SpanOf(shape.nodes[d]);
    if (!spec)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("parameter '{}' has the dynamic dimension '{}', but no tensor was passed for it",
                                   param, name),
                       span);
    if (spec->shape.size() != shape.dims.size()) return true;  // the rank mismatch is reported by the caller
    if (spec->shape[d] == ir::kDynamicExtent) {
      if (auto ok = BindUnboundDim(shape, d, param, map, bindings); !ok) return ok;
      continue;
    }
    shape.dims[d] = spec->shape[d];
    const int64_t value = (spec->shape[d] - dynamic.offset) / dynamic.scale;
    if (value <= 0 || value * dynamic.scale + dynamic.offset != spec->shape[d])
      return MakeError(DiagnosticKind::Type,
                       fmt::format("parameter '{}' has the dimension {}, which no extent of '{}' makes {}", param,
                                   dynamic.written, name, spec->shape[d]),
                       span);
    if (!bindings) continue;
    auto [it, fresh] = bindings->emplace(name, DynamicBinding{value, param});
    if (it->second.inherited) it->second = DynamicBinding{value, param};
    if (fresh || it->second.extent == value) continue;
    if (policy == DynamicPolicy::PerParameter) {
      if (it->second.conflict.empty()) it->second.conflict = fmt::format("{} for parameter '{}'", value, param);
      continue;
    }
    return MakeError(DiagnosticKind::Type,
                       fmt::format("the dynamic dimension '{}' is {} for parameter '{}' but {} for parameter '{}'",
                                   name, it->second.extent, it->second.param, value, param),
                       span, "tensors that share a pl.dynamic dimension must agree on its extent");
  }
  return true;
}

// `pld.DistributedTensor[[shape], dtype]` names a tensor in a rank's window memory. The window is
// ordinary global memory of that rank, so the IR types it as a tensor; what makes it a window is
// where the host program's buffer lies, which the simulator checks where a comm op needs it.
bool IsTensorName(const std::string& name) { return name == "pl.Tensor" || name == "pld.DistributedTensor"; }

ir::Result<ir::TypePtr> ResolveTensor(py::handle node, const std::string& param, const TensorSpec* spec,
                                      const SourceMap& map, const Constants* constants, DynamicBindings* bindings,
                                      DynamicPolicy policy, StaticExtents extents) {
  if (IsTensorName(DottedName(node))) {
    if (!spec)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("parameter '{}' is a bare pl.Tensor but no tensor was passed for it", param),
                       map.SpanOf(node), "pass a torch.Tensor, or annotate pl.Tensor[[shape], dtype]");
    return std::make_shared<ir::TensorType>(spec->shape, spec->dtype);
  }
  if (IsNode(node, "Subscript") && IsTensorName(DottedName(node.attr("value")))) {
    py::handle slice = node.attr("slice");
    if (!IsNode(slice, "Tuple") || py::len(slice.attr("elts")) < 2)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("expected {}[[shape], dtype]", DottedName(node.attr("value"))), map.SpanOf(node));
    py::list elts = slice.attr("elts");
    auto annotated = ReadShape(elts[0], map, constants);
    if (!annotated) return pypto::unexpected(annotated.error());
    if (auto ok = BindDynamicDims(*annotated, param, spec, map, bindings, policy); !ok)
      return pypto::unexpected(ok.error());
    const ir::Shape* shape = &annotated->dims;
    auto dtype = ResolveDtype(elts[1], map, constants);
    if (!dtype) return pypto::unexpected(dtype.error());
    if (extents == StaticExtents::FromTensor && spec && spec->shape.size() == shape->size() &&
        spec->dtype == *dtype)
      shape = &spec->shape;
    if (spec && (spec->shape != *shape || spec->dtype != *dtype)) {
      return MakeError(DiagnosticKind::Type,
                       fmt::format("parameter '{}' is annotated pl.Tensor[[{}], pl.{}] but was passed a tensor of "
                                   "shape [{}] and dtype {}",
                                   param, fmt::join(annotated->Written(), ", "), ir::DataTypeName(*dtype),
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

py::handle WithoutDirection(py::handle annotation, ir::ParamDirection* direction) {
  if (!IsNode(annotation, "Subscript")) return annotation;
  const std::string wrapper = DottedName(annotation.attr("value"));
  if (wrapper != "pl.Out" && wrapper != "pl.InOut") return annotation;
  if (direction) *direction = wrapper == "pl.Out" ? ir::ParamDirection::Out : ir::ParamDirection::InOut;
  return annotation.attr("slice");
}

bool IsTensorAnnotation(py::handle annotation) {
  if (annotation.is_none()) return false;
  py::handle inner = WithoutDirection(annotation);
  return IsTensorName(DottedName(IsNode(inner, "Subscript") ? inner.attr("value") : inner));
}

ir::Result<ResolvedParam> ResolveParam(py::handle annotation, const std::string& name, const TensorSpec* spec,
                                       const SourceMap& map, const Constants* constants, DynamicBindings* bindings,
                                       DynamicPolicy policy, StaticExtents extents) {
  if (annotation.is_none())
    return MakeError(DiagnosticKind::Type, fmt::format("parameter '{}' is missing a type annotation", name));
  ResolvedParam param;
  py::handle inner = WithoutDirection(annotation, &param.direction);
  // `pl.Scalar[pl.FP32]`, or the dtype alone (`scale: pl.FP32`), as upstream also accepts.
  const bool bare_dtype = !IsNode(inner, "Subscript") && DtypeOf(inner, constants).has_value();
  if (bare_dtype || (IsNode(inner, "Subscript") && DottedName(inner.attr("value")) == "pl.Scalar")) {
    if (param.direction != ir::ParamDirection::In)
      return MakeError(DiagnosticKind::Type, fmt::format("scalar parameter '{}' cannot be an output", name),
                       map.SpanOf(annotation), "return a tensor instead");
    auto dtype = ResolveDtype(bare_dtype ? inner : inner.attr("slice"), map, constants);
    if (!dtype) return pypto::unexpected(dtype.error());
    param.type = std::make_shared<ir::ScalarType>(*dtype);
    return param;
  }
  auto type = ResolveTensor(inner, name, spec, map, constants, bindings, policy, extents);
  if (!type) return pypto::unexpected(type.error());
  param.type = *type;
  return param;
}

namespace {

// The shape list of a `pl.Tensor[[...], dtype]` annotation (under pl.Out / pl.InOut or not); nullopt for
// any other annotation, or a shape list that does not read.
std::optional<AnnotatedShape> TensorAnnotationShape(py::handle annotation, const SourceMap& map,
                                                    const Constants* constants) {
  if (annotation.is_none()) return std::nullopt;
  py::handle inner = WithoutDirection(annotation);
  if (!IsNode(inner, "Subscript") || !IsTensorName(DottedName(inner.attr("value")))) return std::nullopt;
  py::handle slice = inner.attr("slice");
  if (!IsNode(slice, "Tuple") || py::len(slice.attr("elts")) < 2) return std::nullopt;
  auto shape = ReadShape(py::list(slice.attr("elts"))[0], map, constants);
  if (!shape) return std::nullopt;
  return std::move(*shape);
}

}  // namespace

std::vector<std::string> BareDynamicNames(py::handle annotation, const SourceMap& map, const Constants* constants) {
  std::vector<std::string> names;
  auto shape = TensorAnnotationShape(annotation, map, constants);
  if (!shape) return names;
  for (const DynamicExtent& dynamic : shape->dynamic)
    names.push_back(dynamic.scale == 1 && dynamic.offset == 0 ? dynamic.name : std::string());
  return names;
}

std::vector<std::optional<int64_t>> AnnotatedExtents(py::handle annotation, const SourceMap& map,
                                                     const Constants* constants) {
  std::vector<std::optional<int64_t>> extents;
  auto shape = TensorAnnotationShape(annotation, map, constants);
  if (!shape) return extents;
  for (size_t d = 0; d < shape->dims.size(); ++d)
    extents.push_back(shape->dynamic[d].name.empty() ? std::optional(shape->dims[d]) : std::nullopt);
  return extents;
}

std::set<std::string> DynamicDimsIn(py::handle annotation, const Constants* constants) {
  std::set<std::string> names;
  if (!constants || annotation.is_none()) return names;
  for (py::handle node : py::module_::import("ast").attr("walk")(annotation)) {
    if (!IsNode(node, "Name")) continue;
    auto it = constants->find(node.attr("id").cast<std::string>());
    if (it != constants->end())
      if (const auto* dim = std::get_if<DynamicDim>(&it->second)) names.insert(dim->name);
  }
  return names;
}

Constants BindConstants(const Constants& constants, const DynamicBindings& bindings) {
  Constants bound = constants;
  for (auto& [name, value] : bound) {
    const auto* dim = std::get_if<DynamicDim>(&value);
    if (!dim) continue;
    auto it = bindings.find(dim->name);
    if (it != bindings.end() && it->second.conflict.empty()) value = it->second.extent;
  }
  return bound;
}

namespace {

// The memory space an annotation names: pl.Mem.Vec or pl.MemorySpace.Vec.
std::optional<ir::MemorySpace> SpaceOf(py::handle node) {
  std::string name = DottedName(node);
  for (std::string_view prefix : {"pl.Mem.", "pl.MemorySpace."})
    if (name.starts_with(prefix)) return ir::MemorySpaceFromName(std::string_view(name).substr(prefix.size()));
  return std::nullopt;
}

// `pl.Array[4, pl.TASK_ID]`: a fixed-length array of orchestration scalars.
ir::Result<ir::TypePtr> ResolveArray(py::handle node, const SourceMap& map) {
  py::handle slice = node.attr("slice");
  py::list elts = IsNode(slice, "Tuple") ? py::list(slice.attr("elts")) : py::list();
  const bool literal_extent = py::len(elts) == 2 && IsNode(elts[0], "Constant") &&
                              py::isinstance<py::int_>(elts[0].attr("value"));
  if (!literal_extent)
    return MakeError(DiagnosticKind::Type, "expected pl.Array[extent, dtype], such as pl.Array[4, pl.TASK_ID]",
                     map.SpanOf(node));
  auto dtype = ResolveDtype(elts[1], map);
  if (!dtype) return pypto::unexpected(dtype.error());
  return ir::TypePtr(std::make_shared<ir::ArrayType>(*dtype, elts[0].attr("value").cast<int64_t>()));
}

}  // namespace

ir::Result<bool> CheckDeclaredType(py::handle annotation, const std::string& name, const ir::TypePtr& actual,
                                   const SourceMap& map, const Constants* constants) {
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
    auto dtype = ResolveDtype(annotation.attr("slice"), map, constants);
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
  auto shape = ResolveShape(elts[0], map, constants);
  if (!shape) return pypto::unexpected(shape.error());
  auto dtype = ResolveDtype(elts[1], map, constants);
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

namespace {

std::optional<int64_t> IntLiteral(py::handle node) {
  if (IsNode(node, "Constant") && py::isinstance<py::int_>(node.attr("value")) &&
      !py::isinstance<py::bool_>(node.attr("value")))
    return node.attr("value").cast<int64_t>();
  return std::nullopt;
}

// `pl.MemRef(offset, size)`: where the allocator placed a tile.
ir::Result<ir::TileMemRef> ResolveMemRef(py::handle node, const SourceMap& map) {
  py::list args = node.attr("args");
  if (py::len(node.attr("keywords")) > 0 || py::len(args) != 2)
    return MakeError(DiagnosticKind::Type, "expected pl.MemRef(byte_offset, size) with two integer literals",
                     map.SpanOf(node), "named and slotted memrefs (pl.MemRef(\"name\")) are not supported yet");
  auto offset = IntLiteral(args[0]), size = IntLiteral(args[1]);
  if (!offset || !size || *offset < 0 || *size <= 0)
    return MakeError(DiagnosticKind::Type, "pl.MemRef takes a byte offset >= 0 and a size > 0 as integer literals",
                     map.SpanOf(node));
  return ir::TileMemRef{*offset, *size};
}

// `pl.TileView(valid_shape=[r, c])`: the tile's valid region (the only view field a tile has here).
// `pl.TileView()` states no region: the tile is valid as a whole (empty).
ir::Result<ir::ValidShape> ResolveTileView(py::handle node, const SourceMap& map, const ExprResolver* exprs) {
  if (py::len(node.attr("args")) == 0 && py::len(node.attr("keywords")) == 0) return ir::ValidShape{};
  if (py::len(node.attr("args")) != 0 || py::len(node.attr("keywords")) != 1 ||
      node.attr("keywords")[py::int_(0)].attr("arg").is_none() ||
      node.attr("keywords")[py::int_(0)].attr("arg").cast<std::string>() != "valid_shape")
    return MakeError(DiagnosticKind::Type, "pl.TileView takes valid_shape=[...] only", map.SpanOf(node));
  py::handle list = node.attr("keywords")[py::int_(0)].attr("value");
  if (!IsNode(list, "List") && !IsNode(list, "Tuple"))
    return MakeError(DiagnosticKind::Type, "valid_shape must be a list", map.SpanOf(list));
  ir::ValidShape valid;
  for (auto element : list.attr("elts")) {
    if (exprs) {
      auto expr = (*exprs)(element);
      if (!expr) return pypto::unexpected(expr.error());
      valid.push_back(*expr);
    } else if (IsNode(element, "Constant") && py::isinstance<py::int_>(element.attr("value"))) {
      valid.push_back(std::make_shared<ir::ConstInt>(element.attr("value").cast<int64_t>(), ir::DataType::INDEX,
                                                     map.SpanOf(element)));
    } else {
      return MakeError(DiagnosticKind::Type, "a valid shape here must be integer literals", map.SpanOf(element));
    }
  }
  return valid;
}

ir::Result<ir::TypePtr> ResolveTile(py::handle node, const SourceMap& map, const Constants* constants,
                                    const ExprResolver* exprs) {
  py::handle slice = node.attr("slice");
  if (!IsNode(slice, "Tuple") || py::len(slice.attr("elts")) < 2)
    return MakeError(DiagnosticKind::Type, "expected pl.Tile[[shape], dtype, ...]", map.SpanOf(node));
  py::list elts = slice.attr("elts");
  auto shape = ResolveShape(elts[0], map, constants);
  if (!shape) return pypto::unexpected(shape.error());
  auto dtype = ResolveDtype(elts[1], map, constants);
  if (!dtype) return pypto::unexpected(dtype.error());
  std::optional<ir::MemorySpace> space;
  std::optional<ir::TileMemRef> memref;
  ir::ValidShape valid;
  bool viewed = false;
  for (size_t i = 2; i < py::len(elts); ++i) {
    py::handle extra = elts[i];
    const std::string dotted = DottedName(extra);
    if (dotted.starts_with("pl.Mem.") || dotted.starts_with("pl.MemorySpace.")) {
      auto named = SpaceOf(extra);
      if (!named)
        return MakeError(DiagnosticKind::Type, fmt::format("'{}' is not a memory space", dotted), map.SpanOf(extra),
                         "memory spaces: Vec, Mat, Left, Right, Acc, Bias");
      if (space) return MakeError(DiagnosticKind::Type, "a tile names its memory space once", map.SpanOf(extra));
      space = named;
    } else if (IsNode(extra, "Call") && DottedName(extra.attr("func")) == "pl.MemRef") {
      if (memref) return MakeError(DiagnosticKind::Type, "a tile has one pl.MemRef", map.SpanOf(extra));
      auto resolved = ResolveMemRef(extra, map);
      if (!resolved) return pypto::unexpected(resolved.error());
      memref = *resolved;
    } else if (IsNode(extra, "Call") && DottedName(extra.attr("func")) == "pl.TileView") {
      if (viewed) return MakeError(DiagnosticKind::Type, "a tile has one pl.TileView", map.SpanOf(extra));
      viewed = true;
      auto resolved = ResolveTileView(extra, map, exprs);
      if (!resolved) return pypto::unexpected(resolved.error());
      if (!resolved->empty() && resolved->size() != shape->size())
        return MakeError(DiagnosticKind::Type,
                         fmt::format("valid_shape has {} extents for a tile of rank {}", resolved->size(),
                                     shape->size()),
                         map.SpanOf(extra));
      valid = std::move(*resolved);
    } else {
      return MakeError(DiagnosticKind::Type,
                       fmt::format("unsupported pl.Tile argument '{}' (expected pl.Mem.<space> or "
                                   "pl.MemRef(offset, size) or pl.TileView(valid_shape=[...]))",
                                   dotted.empty() ? NodeType(extra) : dotted),
                       map.SpanOf(extra));
    }
  }
  return ir::TypePtr(
      std::make_shared<ir::TileType>(*shape, *dtype, space.value_or(ir::MemorySpace::Vec), memref, std::move(valid)));
}

// A tensor annotation's third slot: `pl.ND`, `pl.MX_A_ZZ`, `pl.MX_B_NN` (or `pl.TensorLayout.X`).
ir::Result<ir::TensorLayout> ResolveTensorLayout(py::handle node, const SourceMap& map) {
  std::string name = DottedName(node);
  for (std::string_view prefix : {"pl.TensorLayout.", "pl."})
    if (name.starts_with(prefix)) {
      name = name.substr(prefix.size());
      break;
    }
  if (auto layout = ir::TensorLayoutFromName(name)) return *layout;
  return MakeError(DiagnosticKind::Type,
                   fmt::format("unsupported tensor layout '{}'", name.empty() ? NodeType(node) : DottedName(node)),
                   map.SpanOf(node), "a tensor's third slot is pl.ND, pl.MX_A_ZZ or pl.MX_B_NN (MX scale tensors)");
}

}  // namespace

ir::Result<ir::TypePtr> ResolveType(py::handle node, const SourceMap& map, const Constants* constants,
                                    const ExprResolver* exprs) {
  if (IsNode(node, "Constant") && node.attr("value").is_none()) return ir::TypePtr(std::make_shared<ir::UnknownType>());
  const std::string head = IsNode(node, "Subscript") ? DottedName(node.attr("value")) : DottedName(node);
  if (!IsNode(node, "Subscript")) {
    if (auto dtype = DtypeOf(node, constants)) return ir::TypePtr(std::make_shared<ir::ScalarType>(*dtype));
    if (head.starts_with("pl."))
      if (auto handle = ir::HandleKindFromName(std::string_view(head).substr(3)))
        return ir::TypePtr(std::make_shared<ir::HandleType>(*handle));
    if (head == "pl.Tensor" || head == "pl.Tile" || head == "pl.Scalar")
      return MakeError(DiagnosticKind::Type, fmt::format("'{}' needs its shape and dtype here", head),
                       map.SpanOf(node), fmt::format("write {}", head == "pl.Scalar" ? "pl.Scalar[pl.FP32]"
                                                                                     : head + "[[16, 16], pl.FP32]"));
  } else if (head == "pl.Tensor") {
    py::handle slice = node.attr("slice");
    const size_t slots = IsNode(slice, "Tuple") ? py::len(slice.attr("elts")) : 0;
    if (slots != 2 && slots != 3)
      return MakeError(DiagnosticKind::Type, "expected pl.Tensor[[shape], dtype]", map.SpanOf(node),
                       "a third slot may name an MX scale layout (pl.MX_A_ZZ, pl.MX_B_NN); other tensor layouts, "
                       "views and memrefs are not supported yet");
    py::list elts = slice.attr("elts");
    auto shape = ResolveShape(elts[0], map, constants);
    if (!shape) return pypto::unexpected(shape.error());
    auto dtype = ResolveDtype(elts[1], map, constants);
    if (!dtype) return pypto::unexpected(dtype.error());
    auto layout = slots == 3 ? ResolveTensorLayout(elts[2], map) : ir::Result<ir::TensorLayout>(ir::TensorLayout::ND);
    if (!layout) return pypto::unexpected(layout.error());
    return ir::TypePtr(std::make_shared<ir::TensorType>(*shape, *dtype, *layout));
  } else if (head == "pl.Tile") {
    return ResolveTile(node, map, constants, exprs);
  } else if (head == "pl.Scalar") {
    auto dtype = ResolveDtype(node.attr("slice"), map, constants);
    if (!dtype) return pypto::unexpected(dtype.error());
    return ir::TypePtr(std::make_shared<ir::ScalarType>(*dtype));
  } else if (head == "pl.Array") {
    return ResolveArray(node, map);
  } else if (head == "tuple" || head == "pl.Tuple") {
    py::handle slice = node.attr("slice");
    std::vector<py::handle> nodes;
    if (IsNode(slice, "Tuple")) {
      for (auto element : slice.attr("elts")) nodes.push_back(element);
    } else {
      nodes.push_back(slice);
    }
    std::vector<ir::TypePtr> elements;
    for (auto element : nodes) {
      auto type = ResolveType(element, map, constants, exprs);
      if (!type) return type;
      elements.push_back(*type);
    }
    return ir::TypePtr(std::make_shared<ir::TupleType>(std::move(elements)));
  }
  return MakeError(DiagnosticKind::Type,
                   fmt::format("unsupported type annotation '{}' (expected pl.Tensor[...], pl.Tile[...], "
                               "pl.Scalar[...] or tuple[...])",
                               head.empty() ? NodeType(node) : head),
                   map.SpanOf(node));
}

ir::Result<ResolvedParam> ResolveDeclaredParam(py::handle annotation, const std::string& name, const SourceMap& map,
                                               const Constants* constants) {
  ResolvedParam param;
  py::handle inner = WithoutDirection(annotation, &param.direction);
  auto type = ResolveType(inner, map, constants);
  if (!type) return pypto::unexpected(type.error());
  if ((*type)->As<ir::ScalarType>() && param.direction != ir::ParamDirection::In)
    return MakeError(DiagnosticKind::Type, fmt::format("scalar parameter '{}' cannot be an output", name),
                     map.SpanOf(annotation), "return a tensor instead");
  param.type = *type;
  return param;
}

bool Assignable(const ir::TypePtr& declared, const ir::TypePtr& actual) {
  const auto* tile = declared->As<ir::TileType>();
  const auto* actual_tile = actual->As<ir::TileType>();
  if (tile && actual_tile)
    return tile->shape() == actual_tile->shape() && tile->dtype() == actual_tile->dtype() &&
           tile->memory_space() == actual_tile->memory_space();
  const auto* tuple = declared->As<ir::TupleType>();
  const auto* actual_tuple = actual->As<ir::TupleType>();
  if (tuple && actual_tuple) {
    if (tuple->elements().size() != actual_tuple->elements().size()) return false;
    for (size_t i = 0; i < tuple->elements().size(); ++i)
      if (!Assignable(tuple->elements()[i], actual_tuple->elements()[i])) return false;
    return true;
  }
  return declared->equals(*actual);
}

bool TileStandsForTensor(const ir::TypePtr& declared, const ir::TypePtr& actual) {
  const auto* tensor = declared->As<ir::TensorType>();
  const auto* tile = actual->As<ir::TileType>();
  return tensor && tile && tensor->shape() == tile->shape() && tensor->dtype() == tile->dtype();
}

bool TileRowMergedFrom(const ir::TypePtr& declared, const ir::TypePtr& actual) {
  const auto* merged = declared->As<ir::TileType>();
  const auto* tile = actual->As<ir::TileType>();
  return merged && tile && ir::IsRowMergedFrom(merged->shape(), tile->shape()) && merged->dtype() == tile->dtype() &&
         merged->memory_space() == tile->memory_space();
}

bool TileTakesValueSpace(py::handle annotation, const ir::TypePtr& declared, const ir::TypePtr& actual) {
  const auto* want = declared->As<ir::TileType>();
  const auto* have = actual->As<ir::TileType>();
  if (!want || !have || want->shape() != have->shape() || want->dtype() != have->dtype()) return false;
  if (!IsNode(annotation, "Subscript") || !IsNode(annotation.attr("slice"), "Tuple")) return false;
  for (auto element : annotation.attr("slice").attr("elts")) {
    const std::string name = DottedName(element);
    if (name.starts_with("pl.Mem.") || name.starts_with("pl.MemorySpace.")) return false;
  }
  return true;
}

}  // namespace pypto::frontend
