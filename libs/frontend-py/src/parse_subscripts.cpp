// FunctionParser: subscripts: tensor and tile regions (`x[a:b, c:d]`, `x[i]`) read as loads and
// assigned as stores, array elements, `x.shape[i]` and elements of constant lists.
#include "function_parser.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "affine_form.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"

namespace pypto::frontend {

using ir::DiagnosticKind;
using ir::MakeError;

namespace {

// The indices of a subscript as written (`i, j + 1`), for messages.
std::string WrittenIndices(py::handle slice) {
  py::object unparse = py::module_::import("ast").attr("unparse");
  std::vector<std::string> written;
  for (auto item : IsNode(slice, "Tuple") ? py::list(slice.attr("elts")) : py::list(py::make_tuple(slice)))
    written.push_back(unparse(item).cast<std::string>());
  return fmt::format("{}", fmt::join(written, ", "));
}

}  // namespace

// The tensor or tile whose `.shape` `node` is; null for anything else.
const ir::ShapedType* FunctionParser::ShapeOf(py::handle node) const {
  if (!IsNode(node, "Attribute") || node.attr("attr").cast<std::string>() != "shape" ||
      !IsNode(node.attr("value"), "Name"))
    return nullptr;
  auto it = env_.find(node.attr("value").attr("id").cast<std::string>());
  if (it == env_.end()) return nullptr;
  const ir::Type& type = *it->second->type();
  if (const auto* tensor = type.As<ir::TensorType>()) return tensor;
  return type.As<ir::TileType>();
}

// `x.shape[i]`: extent i (negative counts from the end, as in Python).
ir::Result<ir::ExprPtr> FunctionParser::ParseShapeExtent(py::handle node) {
  const ir::Shape& shape = ShapeOf(node.attr("value"))->shape();
  const ir::Span span = map_.SpanOf(node);
  auto index = ParseExpr(node.attr("slice"));
  if (!index) return pypto::unexpected(index.error());
  const auto i = ir::AsConstInt(*index);
  const auto rank = static_cast<int64_t>(shape.size());
  if (!i || *i < -rank || *i >= rank)
    return MakeError(DiagnosticKind::Type,
                     fmt::format("the index of a {}-d shape must be an integer constant in [{}, {})", rank, -rank,
                                 rank),
                     map_.SpanOf(node.attr("slice")));
  return AxisExtent(node.attr("value").attr("value").attr("id").cast<std::string>(), *ShapeOf(node.attr("value")),
                    static_cast<size_t>(*i < 0 ? *i + rank : *i), span);
}

// `[32, 16][i]` for a constant i: element i (negative counts from the end). A list the kernel names
// from its enclosing scope is such a literal (`valid_shape[0]` with valid_shape = [32, 16]).
ir::Result<ir::ExprPtr> FunctionParser::ParseListElement(py::handle node) {
  auto list = ParseExpr(node.attr("value"));
  if (!list) return list;
  const auto& elements = (*list)->As<ir::TupleLiteral>()->elements();
  auto index = ParseExpr(node.attr("slice"));
  if (!index) return index;
  const auto i = ir::AsConstInt(*index);
  const auto size = static_cast<int64_t>(elements.size());
  if (!i || *i < -size || *i >= size)
    return MakeError(DiagnosticKind::Type,
                     fmt::format("the index of a list of {} must be an integer constant in [{}, {})", size, -size,
                                 size),
                     map_.SpanOf(node.attr("slice")));
  return elements[*i < 0 ? *i + size : *i];
}

// `for_load`: the region is read (a load), which orchestration code may do too: OutlineIncoreScopes
// moves such a load into the kernels that use the tile (sink_tensor_reads.h).
ir::Result<FunctionParser::Region> FunctionParser::ParseRegion(py::handle subscript, bool for_load) {
  const ir::Span span = map_.SpanOf(subscript);
  auto base = ParseExpr(subscript.attr("value"));
  if (!base) return pypto::unexpected(base.error());
  const auto* tensor = (*base)->type()->As<ir::TensorType>();
  const auto* tile = (*base)->type()->As<ir::TileType>();  // `t[:, a:b]`: a window of a tile
  if (!(tensor || tile))
    return MakeError(DiagnosticKind::Type,
                     fmt::format("only tensors and tiles can be sliced here, got {}", (*base)->type()->str()), span);
  if (kernel_depth_ == 0 && !(for_load && tensor))
    return MakeError(DiagnosticKind::Syntax, "tensor slices outside a pl.at scope are read only", span,
                     "assign into tensors inside the kernel's pl.at scope, where a slice assignment is a store");
  py::handle slice = subscript.attr("slice");
  std::vector<py::handle> items;
  if (IsNode(slice, "Tuple")) {
    for (auto item : slice.attr("elts")) items.push_back(item);
  } else {
    items.push_back(slice);
  }
  const auto& dims = tensor ? tensor->shape() : tile->shape();
  if (items.size() > dims.size())
    return MakeError(DiagnosticKind::Type,
                     fmt::format("{} indices for the {}-d {} {}", items.size(), dims.size(),
                                 tensor ? "tensor" : "tile", (*base)->type()->str()),
                     span, fmt::format("index at most its {} axes", dims.size()));
  Region region{.source = *base};
  auto index = [&](int64_t v) { return std::make_shared<ir::ConstInt>(v, ir::DataType::INDEX, span); };
  for (size_t d = 0; d < dims.size(); ++d) {
    if (d >= items.size()) {  // fewer indices imply the whole of the trailing dimensions
      region.offsets.push_back(index(0));
      region.shape.push_back(dims[d]);
      continue;
    }
    py::handle item = items[d];
    if (!IsNode(item, "Slice")) {  // `x[i]`: position i of the axis, which the result drops
      auto position = ParseAxisIndex(item, *base, d);
      if (!position) return pypto::unexpected(position.error());
      region.offsets.push_back(*position);
      region.shape.push_back(1);
      region.dropped.push_back(d);
      continue;
    }
    if (!item.attr("step").is_none())
      return MakeError(DiagnosticKind::Syntax, "slices with a step are not supported", map_.SpanOf(item));
    ir::ExprPtr lower = index(0), upper = index(dims[d]);
    if (!item.attr("lower").is_none()) {
      auto parsed = ParseExpr(item.attr("lower"));
      if (!parsed) return pypto::unexpected(parsed.error());
      lower = *parsed;
    }
    if (!item.attr("upper").is_none()) {
      auto parsed = ParseExpr(item.attr("upper"));
      if (!parsed) return pypto::unexpected(parsed.error());
      upper = *parsed;
    }
    auto extent = StaticExtent(lower, upper);
    if (!extent)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("the slice {}:{} must have a size known at compile time", ir::PrintExpr(lower),
                                   ir::PrintExpr(upper)),
                       map_.SpanOf(item), "write it as start:start + SIZE with a constant SIZE");
    region.offsets.push_back(lower);
    region.shape.push_back(*extent);
  }
  return region;
}

// upper - lower when it is a constant, seeing through the scalars the bounds were computed from:
// `ki * 128 : (ki + 1) * 128`, or `c0 : c1` after `c1 = c0 + 32`.
std::optional<int64_t> FunctionParser::StaticExtent(const ir::ExprPtr& lower, const ir::ExprPtr& upper) const {
  return ConstantDifference(upper, lower, [this](const ir::Var& var) { return ScalarValue(var); });
}

ir::ExprPtr FunctionParser::Tuple(const std::vector<ir::ExprPtr>& values, const ir::Span& span) {
  return std::make_shared<ir::TupleLiteral>(values, span);
}

// ---- arrays (pl.array.create) ------------------------------------------------------------------
// `tids[i]` reads an element (pl.array.get_element) and `tids[i] = tid` replaces one: the name then
// holds the updated array (pl.array.update_element), which a loop carries like any reassigned name.
bool FunctionParser::IsArray(py::handle node) const {
  if (!IsNode(node, "Name")) return false;
  auto it = env_.find(node.attr("id").cast<std::string>());
  return it != env_.end() && it->second->type()->As<ir::ArrayType>();
}

ir::Result<ir::ExprPtr> FunctionParser::ParseArrayLoad(py::handle node) {
  auto array = ParseExpr(node.attr("value"));
  if (!array) return array;
  auto index = ParseExpr(node.attr("slice"));
  if (!index) return index;
  auto call = ir::OpRegistry::Get().CreateCall("array.get_element", {*array, *index}, {}, map_.SpanOf(node));
  if (!call) return pypto::unexpected(call.error());
  return ir::ExprPtr(*call);
}

ir::Result<ir::StmtPtr> FunctionParser::ParseArrayStore(py::handle stmt, py::handle target) {
  auto array = ParseExpr(target.attr("value"));
  if (!array) return pypto::unexpected(array.error());
  auto index = ParseExpr(target.attr("slice"));
  if (!index) return pypto::unexpected(index.error());
  auto value = ParseExpr(stmt.attr("value"));
  if (!value) return pypto::unexpected(value.error());
  const ir::Span span = map_.SpanOf(stmt);
  auto call = ir::OpRegistry::Get().CreateCall("array.update_element", {*array, *index, *value}, {}, span);
  if (!call) return pypto::unexpected(call.error());
  const std::string name = target.attr("value").attr("id").cast<std::string>();
  auto var = std::make_shared<ir::Var>(name, (*call)->type(), map_.SpanOf(target));
  env_[name] = var;
  return ir::StmtPtr(std::make_shared<ir::AssignStmt>(var, *call, span));
}

// `tile = x[r : r + 128, c : c + 256]` inside a kernel: a load of that region; `t[:, a:b]` of a
// tile is a tile.slice, a copy of that window. Integer indices drop their axes (DropIndexedAxes),
// and indexing every axis reads an element (parse_subscript_indices.cpp).
ir::Result<ir::ExprPtr> FunctionParser::ParseSliceLoad(py::handle node) {
  auto region = ParseRegion(node, /*for_load=*/true);
  if (!region) return pypto::unexpected(region.error());
  const ir::Span span = map_.SpanOf(node);
  if (region->dropped.size() == region->shape.size()) return ReadElement(*region, span);
  std::vector<ir::ExprPtr> shape;
  for (int64_t dim : region->shape) shape.push_back(std::make_shared<ir::ConstInt>(dim, ir::DataType::INDEX, span));
  if (auto through = ReadThroughRegion(*region, span)) {
    if (!*through) return pypto::unexpected(through->error());
    *region = std::move(**through);
  }
  const bool of_tile = region->source->type()->As<ir::TileType>();
  auto window = of_tile ? ir::OpRegistry::Get().CreateCall(
                              "tile.slice", {region->source, Tuple(shape, span), Tuple(region->offsets, span)}, {}, span)
                        : ir::OpRegistry::Get().CreateCall(
                              "tile.load", {region->source, Tuple(region->offsets, span), Tuple(shape, span)}, {}, span);
  if (!window) return pypto::unexpected(window.error());
  if (region->dropped.empty()) return ir::ExprPtr(*window);
  return DropIndexedAxes(*region, *window, node);
}

// `y[r : r + 128, c : c + 256] = tile` inside a kernel: a store of the tile into that region.
ir::Result<ir::StmtPtr> FunctionParser::ParseSliceAssign(py::handle stmt, py::handle target) {
  auto region = ParseRegion(target);
  if (!region) return pypto::unexpected(region.error());
  if (!region->source->As<ir::Var>() || !IsNode(target.attr("value"), "Name"))
    return MakeError(DiagnosticKind::Syntax, "only a tensor or tile named by a variable can be assigned into",
                     map_.SpanOf(target.attr("value")), "give the value a name first");
  if (region->dropped.size() == region->shape.size()) {
    const std::string name = target.attr("value").attr("id").cast<std::string>();
    const std::string indices = WrittenIndices(target.attr("slice"));
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("'{}[{}] = ...' indexes every axis: a subscript assignment writes a window of a "
                                 "{}, not one element",
                                 name, indices, region->source->type()->As<ir::TileType>() ? "tile" : "tensor"),
                     map_.SpanOf(target),
                     fmt::format("write the element with pl.write({}, [{}], value), or keep an axis as a slice "
                                 "(i:i + 1) to write a tile into it",
                                 name, indices));
  }
  const bool into_tile = region->source->type()->As<ir::TileType>();
  auto value = ParseExpr(stmt.attr("value"));
  if (!value) return pypto::unexpected(value.error());
  const ir::Span span = map_.SpanOf(stmt);
  if (!into_tile && (*value)->type()->As<ir::TensorType>()) {  // a tensor copied into the window is loaded whole
    value = LoadWhole(*value, map_.SpanOf(stmt.attr("value")));
    if (!value) return pypto::unexpected(value.error());
  }
  const auto* tile = (*value)->type()->As<ir::TileType>();
  if (!tile)
    return MakeError(DiagnosticKind::Type,
                     fmt::format("a {} slice is assigned a tile, got {}", into_tile ? "tile" : "tensor",
                                 (*value)->type()->str()),
                     map_.SpanOf(stmt.attr("value")));
  if (auto through = WrittenThroughRegion(*region, span)) {
    if (!*through) return pypto::unexpected(through->error());
    (*through)->dropped = region->dropped;
    *region = std::move(**through);
  }
  if (!region->dropped.empty()) {  // `y[i] = t`: t fills the window without its indexed axes
    auto lifted = LiftIntoWindow(*region, *value, target);
    if (!lifted) return pypto::unexpected(lifted.error());
    value = std::move(lifted);
    tile = (*value)->type()->As<ir::TileType>();
  }
  if (region->source->type()->As<ir::TileType>()) return AssignTileWindow(stmt, target, *region, *value);
  // A tile whose valid region is the slice (`out[:, 0:4] = narrowed`, narrowed [16, 8] with valid
  // [16, 4]) stores that region: the store writes a tile's valid part only.
  if (region->dropped.empty() && tile->shape() != region->shape && StaticValidShape(*tile) != region->shape)
    return MakeError(DiagnosticKind::Type,
                     fmt::format("the slice has shape [{}] but the tile assigned to it is {}",
                                 fmt::join(region->shape, ", "), tile->str()),
                     span);
  auto call = ir::OpRegistry::Get().CreateCall("tile.store", {*value, Tuple(region->offsets, span), region->source},
                                               {}, span);
  if (!call) return pypto::unexpected(call.error());
  return ir::StmtPtr(std::make_shared<ir::EvalStmt>(*call, span));
}

// A tile's valid region when every extent of it is a constant; its shape when it has none.
ir::Shape FunctionParser::StaticValidShape(const ir::TileType& tile) {
  if (!tile.has_partial_valid_shape()) return tile.shape();
  ir::Shape valid;
  for (const auto& extent : tile.valid_shape()) {
    auto constant = ir::AsConstInt(extent);
    if (!constant) return {};
    valid.push_back(*constant);
  }
  return valid;
}

// `h_tile[:, k : k + 512] = q` inside a kernel, where `h_tile = h[r : r + 16]` is a slice taken in
// orchestration code: the slice is a view of h there (as upstream has it), so the assignment writes
// h itself, at the slice's offsets plus the window's: the region of h this returns, which the
// assignment stores into like any tensor's. (The slice is a load only where it is read.) Nothing
// when the target is not such a slice. A later read of the slice in the same kernel would see the
// values loaded before this write, so it is refused (StaleSliceRead).
std::optional<ir::Result<FunctionParser::Region>> FunctionParser::WrittenThroughRegion(const Region& window,
                                                                                       const ir::Span& span) {
  auto region = RegionInSlicedTensor(window, span);
  if (!region || !*region) return region;
  const auto* var = window.source->As<ir::Var>();
  viewed_slices_.insert(var);  // its load is dropped if nothing reads it
  written_through_.insert(var);
  return region;
}

// `h_tile[:, k : k + 512]` or `pl.slice(h_tile, [16, 512], [0, k])` read inside a kernel, where
// `h_tile = h[r : r + 16]` is a slice taken in orchestration code: a view of h there, as upstream
// has it, so the read loads that window of h itself, at the slice's offsets plus the window's (the
// region this returns), instead of the whole slice into UB and a copy of the window out of it
// (which a slice bigger than UB could not even make). Nothing when the source is not such a slice.
std::optional<ir::Result<FunctionParser::Region>> FunctionParser::ReadThroughRegion(const Region& window,
                                                                                    const ir::Span& span) {
  auto region = RegionInSlicedTensor(window, span);
  if (region && *region) viewed_slices_.insert(window.source->As<ir::Var>());  // dropped if nothing reads it
  return region;
}

// The region of its tensor that a window of an orchestration slice is, inside a kernel: the same
// shape at the slice's offsets plus the window's. Nothing when `window.source` is not such a slice
// (or one taken with more than a plain window: a valid_shape, another rank).
std::optional<ir::Result<FunctionParser::Region>> FunctionParser::RegionInSlicedTensor(const Region& window,
                                                                                       const ir::Span& span) const {
  const auto* var = window.source->As<ir::Var>();
  auto it = var && kernel_depth_ > 0 ? orchestration_slices_.find(var) : orchestration_slices_.end();
  if (it == orchestration_slices_.end()) return std::nullopt;
  const auto* load = it->second->As<ir::Call>();
  const auto* slice_offsets = load->args()[1]->As<ir::TupleLiteral>();
  if (load->args().size() != 3 || !load->kwargs().empty() || !slice_offsets ||
      slice_offsets->elements().size() != window.offsets.size())
    return std::nullopt;
  Region region{.source = load->args()[0], .shape = window.shape, .dropped = window.dropped};
  for (size_t d = 0; d < window.offsets.size(); ++d) {
    const ir::ExprPtr& base = slice_offsets->elements()[d];
    auto sum = ir::AsConstInt(window.offsets[d]) == 0 ? ir::Result<ir::ExprPtr>(base)
               : ir::AsConstInt(base) == 0           ? ir::Result<ir::ExprPtr>(window.offsets[d])
                                                     : ir::MakeBinary(ir::BinaryOp::Add, base, window.offsets[d], span);
    if (!sum) return pypto::unexpected(sum.error());
    region.offsets.push_back(*sum);
  }
  return region;
}

// `t[a:b, :] = u` with a tile `t`: `t = pl.tile.assemble(t, u, [a, 0])`, u written into that window
// of t in place. The name is rebound like any assignment, so a loop or branch carries the new t.
ir::Result<ir::StmtPtr> FunctionParser::AssignTileWindow(py::handle stmt, py::handle target, const Region& window,
                                                         const ir::ExprPtr& value) {
  const std::string name = target.attr("value").attr("id").cast<std::string>();
  const auto* tile = value->type()->As<ir::TileType>();
  if (tile->shape() != window.shape)
    return MakeError(DiagnosticKind::Type,
                     fmt::format("the window of '{}' has shape [{}] but the tile assigned to it has shape [{}]",
                                 name, fmt::join(window.shape, ", "),
                                 fmt::join(tile->shape(), ", ")),
                     map_.SpanOf(target), "slice the window to the assigned tile's shape");
  const ir::Span span = map_.SpanOf(stmt);
  auto call = ir::OpRegistry::Get().CreateCall("tile.assemble",
                                               {window.source, value, Tuple(window.offsets, span)}, {}, span);
  if (!call) return pypto::unexpected(call.error());
  auto var = std::make_shared<ir::Var>(name, (*call)->type(), map_.SpanOf(target));
  env_[name] = var;
  unavailable_.erase(name);
  assigned_types_[name] = var->type();
  return ir::StmtPtr(std::make_shared<ir::AssignStmt>(var, *call, span));
}

}  // namespace pypto::frontend
