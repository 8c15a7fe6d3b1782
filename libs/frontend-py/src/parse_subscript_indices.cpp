// FunctionParser: integer indices in tensor and tile subscripts, with numpy's meaning (as upstream
// gives them): an index selects one position of its axis and drops the axis, a slice keeps it, and
// axes left unindexed are whole. Indexing every axis (`x[i, j]` of a 2-D x) reads one element;
// anything else is a window with the indexed axes dropped (`x[i]` of a [4, 16, 32] tensor is
// [16, 32]). Our slice ops have no rank-dropping form, so the window is taken with the indexed
// axes kept at extent 1 and then reshaped without them.
#include "function_parser.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "pypto/ir/op_registry.h"
#include "result_binding.h"

namespace pypto::frontend {

using ir::DiagnosticKind;
using ir::MakeError;

namespace {

const char* KindOf(const ir::Type& type) { return type.As<ir::TileType>() ? "tile" : "tensor"; }

// The window's extents without the indexed axes.
ir::Shape KeptShape(const ir::Shape& window, const std::vector<size_t>& dropped) {
  ir::Shape kept;
  for (size_t d = 0; d < window.size(); ++d)
    if (std::find(dropped.begin(), dropped.end(), d) == dropped.end()) kept.push_back(window[d]);
  return kept;
}

ir::Shape WithoutLeadingOnes(ir::Shape shape) {
  while (shape.size() > 1 && shape.front() == 1) shape.erase(shape.begin());
  return shape;
}

// Whether the window is one contiguous run of its tensor (a row-major tensor): past the first
// axis it spans more than one position of, it covers every axis whole. The runtime reshapes only
// such a view.
bool IsContiguousWindow(const ir::Shape& window, const ir::Shape& dims) {
  size_t d = 0;
  while (d < window.size() && window[d] == 1) ++d;
  for (++d; d < window.size(); ++d)
    if (window[d] != dims[d]) return false;
  return true;
}

ir::ExprPtr ShapeTuple(const ir::Shape& shape, const ir::Span& span) {
  std::vector<ir::ExprPtr> extents;
  for (int64_t extent : shape) extents.push_back(std::make_shared<ir::ConstInt>(extent, ir::DataType::INDEX, span));
  return std::make_shared<ir::TupleLiteral>(std::move(extents), span);
}

ir::Result<ir::ExprPtr> Call(const std::string& op, std::vector<ir::ExprPtr> args, const ir::Span& span) {
  auto call = ir::OpRegistry::Get().CreateCall(op, std::move(args), {}, span);
  if (!call) return pypto::unexpected(call.error());
  return ir::ExprPtr(*call);
}

}  // namespace

// The index of axis `axis` of `indexed` in a subscript: an integer scalar. A constant one is
// checked against the axis's extent, and a negative one counts from the end, as in Python; one
// computed when the kernel runs is checked there.
ir::Result<ir::ExprPtr> FunctionParser::ParseAxisIndex(py::handle item, const ir::ExprPtr& indexed, size_t axis) {
  const ir::Span span = map_.SpanOf(item);
  auto index = ParseExpr(item);
  if (!index) return index;
  const ir::Type& type = *indexed->type();
  const auto* scalar = (*index)->type()->As<ir::ScalarType>();
  if (!scalar || !ir::IsInteger(scalar->dtype()))
    return MakeError(DiagnosticKind::Type,
                     fmt::format("a {} is indexed by integers and slices (start:stop), got {}", KindOf(type),
                                 (*index)->type()->str()),
                     span);
  const auto constant = ir::AsConstInt(*index);
  if (!constant) return index;
  const auto* tensor = type.As<ir::TensorType>();
  const int64_t extent = tensor ? tensor->shape()[axis] : type.As<ir::TileType>()->shape()[axis];
  if (*constant < -extent || *constant >= extent)
    return MakeError(DiagnosticKind::Type,
                     fmt::format("index {} is out of range for axis {} of {}, whose extent is {}", *constant, axis,
                                 type.str(), extent),
                     span, fmt::format("an index of this axis is in [{}, {})", -extent, extent));
  if (*constant >= 0) return index;
  return ir::ExprPtr(std::make_shared<ir::ConstInt>(*constant + extent, ir::DataType::INDEX, span));
}

// `x[i, j]` indexing every axis: the element, as pl.read(x, [i, j]) reads it (tensor.read of a
// tensor, tile.read of a tile).
ir::Result<ir::ExprPtr> FunctionParser::ReadElement(const Region& region, const ir::Span& span) {
  const bool tile = region.source->type()->As<ir::TileType>();
  return Call(tile ? "tile.read" : "tensor.read", {region.source, Tuple(region.offsets, span)}, span);
}

// `window` (the region with its indexed axes at extent 1: a load, a tile slice, or in orchestration
// code a load that stands for a view) without those axes.
//  - A tile keeps two axes at least, as upstream's tiles do: `t[i]` of a [16, 32] tile is [1, 32]
//    (unit axes go first, with a warning, since `t[:, j]` becomes the row [1, 16]).
//  - A tensor in a kernel is loaded: the loaded tile is reshaped (`x[i]` of [4, 16, 32] is [16, 32]).
//  - A tensor in orchestration code is a view (upstream's tensor.slice with drop_dims): the view of
//    the window, reshaped by the runtime, which needs it contiguous.
ir::Result<ir::ExprPtr> FunctionParser::DropIndexedAxes(const Region& region, const ir::ExprPtr& window,
                                                        py::handle subscript) {
  const ir::Span span = map_.SpanOf(subscript);
  ir::Shape kept = KeptShape(region.shape, region.dropped);
  if (const auto* tile = region.source->type()->As<ir::TileType>()) {
    if (kept.size() < 2) {
      const size_t natural = kept.size();
      kept.insert(kept.begin(), 2 - natural, 1);
      WarnAt(span, fmt::format("this subscript of {} leaves {} axis; tiles keep two, so it is a [{}] tile (reshape "
                               "it with pl.reshape for another layout)",
                               tile->str(), natural, fmt::join(kept, ", ")));
    }
    if (kept == region.shape) return window;
    return Call("tile.reshape", {window, ShapeTuple(kept, span)}, span);
  }
  if (kernel_depth_ > 0) return Call("tile.reshape", {window, ShapeTuple(kept, span)}, span);
  const auto* tensor = region.source->type()->As<ir::TensorType>();
  if (!IsContiguousWindow(region.shape, tensor->shape()))
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("in orchestration code this subscript is a view of the window [{}] of {}, which "
                                 "is not contiguous, so its indexed axes cannot be dropped",
                                 fmt::join(region.shape, ", "), tensor->str()),
                     span,
                     "index the tensor inside the pl.at scope or kernel that uses it (a kernel loads any window), or "
                     "keep the axis with a slice (i:i + 1)");
  auto view = SliceAsView(window);
  if (!view) return view;
  return Call("tensor.reshape", {*view, ShapeTuple(kept, span)}, span);
}

// `y[i] = t` (`target` the subscript): `value` checked against the window without its indexed axes
// and given them back (extent 1), so that it stores or assembles into the window. A tile `value` may
// carry leading unit axes where the dropped window has fewer than two axes (`y[i] = row` with a
// [1, 32] row).
ir::Result<ir::ExprPtr> FunctionParser::LiftIntoWindow(const Region& region, const ir::ExprPtr& value,
                                                       py::handle target) {
  const ir::Span span = map_.SpanOf(target);
  const std::string name = target.attr("value").attr("id").cast<std::string>();
  const auto* tile = value->type()->As<ir::TileType>();
  const ir::Shape kept = KeptShape(region.shape, region.dropped);
  const ir::Shape& shape = tile->shape();
  const bool same_extents = WithoutLeadingOnes(shape) == WithoutLeadingOnes(kept) &&
                            shape.size() <= std::max<size_t>(kept.size(), 2) && shape.size() >= kept.size();
  if (!same_extents)
    return MakeError(DiagnosticKind::Type,
                     fmt::format("the window of '{}' has shape [{}] once its indexed axes are dropped, but the tile "
                                 "assigned to it is {}",
                                 name, fmt::join(kept, ", "), tile->str()),
                     span, "slice the window to the assigned tile's shape");
  // A store takes a tile whose extra axes are leading ones itself (a [16, 32] tile into [1, 16, 32]).
  const bool stores_as_is = region.source->type()->As<ir::TensorType>() &&
                            WithoutLeadingOnes(shape) == WithoutLeadingOnes(region.shape);
  if (shape == region.shape || stores_as_is) return value;
  if (tile->has_partial_valid_shape())
    return MakeError(DiagnosticKind::Type,
                     fmt::format("a tile valid only in part ({}) cannot be written into the window [{}] of '{}'",
                                 tile->str(), fmt::join(region.shape, ", "), name),
                     span, "keep the indexed axes as slices (i:i + 1) so the window has the tile's shape");
  return Call("tile.reshape", {value, ShapeTuple(region.shape, span)}, span);
}

}  // namespace pypto::frontend
