// tile.* creation and movement: global tensor <-> tile transfers, fresh tiles, moves between
// on-chip buffers, reshapes and reinterpreted views.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>
#include <vector>

#include "op_checks.h"
#include "pypto/ir/row_merge.h"

namespace pypto::ir {
namespace {

using namespace ops;

MemorySpace TargetMemory(const Call::Kwargs& kwargs, MemorySpace fallback) {
  return FindAttr<MemorySpace>(kwargs, "target_memory").value_or(fallback);
}

// `valid_shape=[r, c]` (the fourth argument): the part of the tile the load fills.
Result<ValidShape> LoadValidShape(const std::vector<ExprPtr>& args, const Shape& shape, const Span& span) {
  if (args.size() < 4) return ValidShape{};
  const auto* extents = args[3]->As<TupleLiteral>();
  if (!extents) return TypeError("the valid_shape of pl.load must be a list of integers", span);
  return CheckValidShape(extents->elements(), shape, "the valid_shape of pl.load", span);
}

// `clamp=True`: the valid region is cut back to the tensor's edge, min(valid, dim - offset) in each
// dimension, instead of a read past the edge being an error. Offsets known only at run time make
// the cut an expression of them.
Result<ValidShape> ClampToTensor(const TensorType& tensor, const Offsets& offsets, const Shape& shape,
                                 const ValidShape& valid, const Span& span) {
  if (offsets.size() != shape.size() || tensor.shape().size() != shape.size()) return valid;  // CheckRegion says why
  ValidShape clamped;
  bool narrowed = false;
  for (size_t d = 0; d < shape.size(); ++d) {
    ExprPtr extent = valid.empty() ? std::make_shared<ConstInt>(shape[d], DataType::INDEX, span) : valid[d];
    const auto requested = AsConstInt(extent);
    if (offsets[d] && requested) {
      const int64_t room = std::max<int64_t>(tensor.shape()[d] - *offsets[d], 0);
      if (*requested > room) {
        extent = std::make_shared<ConstInt>(room, DataType::INDEX, span);
        narrowed = true;
      }
    } else if (!offsets[d]) {
      return TypeError("pl.load(..., clamp=True) with offsets computed at run time is not supported yet", span,
                       "give the tail's extent as valid_shape=[...] instead");
    }
    clamped.push_back(std::move(extent));
  }
  return narrowed ? clamped : valid;
}

// A load whose window reaches past the tensor's end reads memory that is not the tensor's (on the
// device, whatever lies behind it in global memory): upstream moves the whole window, so such a
// program depends on bytes it does not own. The fix is the one upstream's own kernels use for a
// ragged tail: say how much of the window lies in the tensor, and only that much is read.
std::string PastEdgeHint(const TensorType& tensor, const Offsets& offsets, const Shape& read) {
  if (offsets.size() != read.size() || tensor.shape().size() != read.size()) return "";
  for (size_t d = 0; d < read.size(); ++d) {
    const int64_t dim = tensor.shape()[d];
    if (read[d] <= 0 || (offsets[d] ? *offsets[d] + read[d] <= dim : read[d] <= dim)) continue;
    if (offsets[d] && *offsets[d] >= dim) return "";  // the window starts past the end: nothing to narrow
    std::vector<std::string> valid;
    for (size_t k = 0; k < read.size(); ++k) {
      if (k != d)
        valid.push_back(std::to_string(read[k]));
      else if (offsets[k])
        valid.push_back(std::to_string(dim - *offsets[k]));
      else
        valid.push_back(fmt::format("pl.min({}, {} - offset)", read[k], dim));
    }
    return fmt::format("only a tile's valid region is read: to read the part of the window that lies in the "
                       "tensor, give it as valid_shape=[{}] (pl.slice(tensor, shape, offsets, valid_shape=...) or "
                       "pl.load(..., valid_shape=...)); the rest of the tile is then undefined",
                       fmt::join(valid, ", "));
  }
  return "";
}

Result<TypePtr> DeduceLoad(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  auto tensor = ExpectTensor(args[0], "the source of pl.load", span);
  if (!tensor) return pypto::unexpected(tensor.error());
  auto offsets = ScalarOffsets(args[1], "load offsets", span);
  if (!offsets) return pypto::unexpected(offsets.error());
  auto shape = StaticInts(args[2], "load shapes", span);
  if (!shape) return pypto::unexpected(shape.error());
  auto valid = LoadValidShape(args, *shape, span);
  if (!valid) return pypto::unexpected(valid.error());
  const MemorySpace space = TargetMemory(kwargs, MemorySpace::Vec);
  if (space != MemorySpace::Vec && space != MemorySpace::Mat) {
    return TypeError(fmt::format("a load copies into Vec or Mat, not {}", MemorySpaceName(space)), span,
                     "load into Mat, then pl.move the tile into Left or Right");
  }
  if (FindAttr<bool>(kwargs, "clamp").value_or(false)) {
    auto clamped = ClampToTensor(**tensor, *offsets, *shape, *valid, span);
    if (!clamped) return pypto::unexpected(clamped.error());
    *valid = std::move(*clamped);
  }
  auto tile = std::make_shared<TileType>(*shape, (*tensor)->dtype(), space, std::nullopt, *valid);
  // Only the valid region is read: a ragged tail's tile may reach past the end of the tensor.
  Shape read = StaticValidExtents(*tile);
  for (auto& extent : read) extent = std::max<int64_t>(extent, 1);
  if (auto ok = CheckRegion(**tensor, *offsets, read, span); !ok) {
    Diagnostic error = ok.error();
    error.hint = PastEdgeHint(**tensor, *offsets, read);
    return pypto::unexpected(std::move(error));
  }
  return TypePtr(tile);
}

// The accumulator (L0C) stores through the fixpipe, which may narrow FP32 to FP16/BF16 on the way.
bool StorableAs(const TileType& tile, DataType tensor_dtype) {
  if (tile.dtype() == tensor_dtype) return true;
  return tile.memory_space() == MemorySpace::Acc && tile.dtype() == DataType::FP32 &&
         (tensor_dtype == DataType::FP16 || tensor_dtype == DataType::BF16);
}

// `atomic="add"`: the tile is added to what the region holds (pl.assemble(..., atomic=pl.AtomicType.Add)).
bool IsAtomicStore(const OpAttrs& attrs) { return FindAttr<std::string>(attrs, "atomic").has_value(); }

// Whether `shapes` is an N-d window (rank > 2, the offsets' rank) whose leading dimensions merge
// into the rows of the 2-D tile `tile`.
bool IsRowMergedWindow(const Shape& shapes, const Shape& tile, size_t offsets_rank) {
  return shapes.size() == offsets_rank && IsRowMergedFrom(tile, shapes);
}

Result<TypePtr> DeduceStore(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  auto tile = ExpectTile(args[0], "the value of pl.store", span);
  if (!tile) return pypto::unexpected(tile.error());
  auto offsets = ScalarOffsets(args[1], "store offsets", span);
  if (!offsets) return pypto::unexpected(offsets.error());
  auto tensor = ExpectTensor(args[2], "the destination of pl.store", span);
  if (!tensor) return pypto::unexpected(tensor.error());
  const MemorySpace space = (*tile)->memory_space();
  if (space != MemorySpace::Vec && space != MemorySpace::Acc) {
    return TypeError(fmt::format("a tile in {} cannot be stored to global memory; only Vec and Acc tiles can",
                                 MemorySpaceName(space)),
                     span);
  }
  if (!StorableAs(**tile, (*tensor)->dtype())) {
    return TypeError(fmt::format("cannot store a {} tile into a {} tensor", DataTypeName((*tile)->dtype()),
                                 DataTypeName((*tensor)->dtype())),
                     span, "convert the tile first with pl.cast");
  }
  // `shapes=` names the region to store: the tile's top-left corner of that size (gate.py stores one
  // element of a [16, 1] tile with shapes=[1, 1]), the tile's own extents by default.
  // A 2-D tile whose rows merge a window's leading dimensions (FlattenTileNdTo2D's [32, 64] of a
  // [2, 16, 64] window) names that N-d window with shapes=, in the tensor's rank.
  std::optional<Shape> part, window;
  if (args.size() > 3) {
    auto shapes = StaticInts(args[3], "the store shapes", span);
    if (!shapes) return pypto::unexpected(shapes.error());
    const Shape& whole = (*tile)->shape();
    if (IsRowMergedWindow(*shapes, whole, offsets->size())) {
      if ((*tile)->has_partial_valid_shape())
        return TypeError(fmt::format("pl.store of {} into the window {} needs a tile valid as a whole",
                                     (*tile)->str(), ShapeStr(*shapes)),
                         span);
      window = *shapes;
    }
  }
  if (args.size() > 3 && !window) {
    auto shapes = StaticInts(args[3], "the store shapes", span);
    if (!shapes) return pypto::unexpected(shapes.error());
    const Shape& whole = (*tile)->shape();
    bool inside = shapes->size() == whole.size();
    for (size_t d = 0; inside && d < whole.size(); ++d) inside = (*shapes)[d] >= 1 && (*shapes)[d] <= whole[d];
    if (!inside)
      return TypeError(fmt::format("pl.store shapes={} is not a corner of the {} tile", ShapeStr(*shapes),
                                   (*tile)->str()),
                       span, "give one extent per dimension of the tile, each at most the tile's");
    if (*shapes != whole) part = *shapes;
  }
  if (auto atomic = FindAttr<std::string>(kwargs, "atomic")) {
    if (*atomic != "add")
      return TypeError(fmt::format("pl.store atomic=\"{}\" is not supported; the atomic store is atomic=\"add\"",
                                   *atomic),
                       span);
    const DataType dtype = (*tensor)->dtype();
    static constexpr DataType kAtomicDtypes[] = {DataType::FP32, DataType::FP16, DataType::BF16,
                                                 DataType::INT32, DataType::INT16, DataType::INT8};
    if (std::find(std::begin(kAtomicDtypes), std::end(kAtomicDtypes), dtype) == std::end(kAtomicDtypes))
      return TypeError(fmt::format("an atomic-add store into a {} tensor is not supported (FP32, FP16, BF16, INT32, "
                                   "INT16 and INT8 are)",
                                   DataTypeName(dtype)),
                       span);
  }
  // Only the valid region is written; a ragged tail's tile may reach past the end of the tensor.
  Shape shape = window ? *window : StaticValidExtents(**tile);
  for (size_t d = 0; d < shape.size(); ++d) {
    if (part) shape[d] = std::min(shape[d], (*part)[d]);
    shape[d] = std::max<int64_t>(shape[d], 1);
  }
  // A tile and its region may differ in rank by leading 1s: [16, 128] stores into a 3-D tensor's
  // [1, 16, 128], and a [1, 16, 128] product into a 2-D tensor's [16, 128].
  while (shape.size() < offsets->size()) shape.insert(shape.begin(), 1);
  while (shape.size() > offsets->size() && shape.front() == 1) shape.erase(shape.begin());
  if (auto ok = CheckRegion(**tensor, *offsets, shape, span); !ok) return pypto::unexpected(ok.error());
  return args[2]->type();
}

Result<TypePtr> DeduceCreate(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  auto shape = StaticInts(args[0], "the tile shape", span);
  if (!shape) return pypto::unexpected(shape.error());
  for (int64_t dim : *shape)
    if (dim <= 0) return TypeError(fmt::format("tile dimensions must be positive, got {}", ShapeStr(*shape)), span);
  const DataType dtype = *FindAttr<DataType>(kwargs, "dtype");
  return std::make_shared<TileType>(*shape, dtype, TargetMemory(kwargs, MemorySpace::Vec));
}

Result<TypePtr> DeduceFull(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  auto value = ExpectNumericScalar(args[1], "the fill value of pl.full", span);
  if (!value) return pypto::unexpected(value.error());
  return DeduceCreate(args, kwargs, span);
}

// Which buffer-to-buffer moves the hardware has (TMOV / TEXTRACT paths).
bool CanMove(MemorySpace from, MemorySpace to) {
  using M = MemorySpace;
  switch (from) {
    case M::Mat:
      return to == M::Left || to == M::Right || to == M::Bias || to == M::Mat || to == M::LeftScale ||
             to == M::RightScale;
    case M::Acc: return to == M::Mat || to == M::Vec;
    case M::Vec: return to == M::Vec || to == M::Mat;
    default: return false;
  }
}

Result<TypePtr> DeduceMove(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  auto tile = ExpectTile(args[0], "the source of pl.move", span);
  if (!tile) return pypto::unexpected(tile.error());
  const MemorySpace to = *FindAttr<MemorySpace>(kwargs, "target_memory");
  const MemorySpace from = (*tile)->memory_space();
  if (!CanMove(from, to)) {
    return TypeError(fmt::format("cannot move a tile from {} to {}", MemorySpaceName(from), MemorySpaceName(to)),
                     span, "moves go Mat -> Left/Right/Bias/Mat/LeftScale/RightScale, Acc -> Mat/Vec, Vec -> Vec/Mat");
  }
  return std::make_shared<TileType>((*tile)->shape(), (*tile)->dtype(), to, std::nullopt, (*tile)->valid_shape());
}

// pl.reinterpret_view(t, dtype, shape=...): t's bytes read as elements of another type. Without a
// shape the last (contiguous) dimension scales by the ratio of the element sizes, as torch's
// Tensor.view(dtype) does.
Result<TypePtr> DeduceReinterpretView(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs,
                                      const Span& span) {
  auto tile = ExpectTile(args[0], "the source of tile.reinterpret_view", span);
  if (!tile) return pypto::unexpected(tile.error());
  const TileType& source = **tile;
  const DataType target = *FindAttr<DataType>(kwargs, "dtype");
  if (target == source.dtype())
    return TypeError(fmt::format("tile.reinterpret_view of {} to its own dtype {}", source.str(),
                                 DataTypeName(target)),
                     span, "use the tile itself, or pl.reshape to change only its shape");
  // A partial valid region would have to be split or merged across element boundaries.
  if (source.has_partial_valid_shape())
    return TypeError(fmt::format("tile.reinterpret_view of {}, which is valid only in part", source.str()), span,
                     "reinterpret a tile that is valid as a whole (pl.fillpad it first)");
  const int64_t source_bits = source.num_elements() * DataTypeBits(source.dtype());
  Shape shape = source.shape();
  if (args.size() > 1) {
    auto given = StaticInts(args[1], "the shape of tile.reinterpret_view", span);
    if (!given) return pypto::unexpected(given.error());
    shape = *given;
  } else {
    const int64_t row_bits = shape.back() * DataTypeBits(source.dtype());
    if (row_bits % DataTypeBits(target) != 0)
      return TypeError(fmt::format("the last dimension of {} ({} bits) is not a whole number of {} elements",
                                   source.str(), row_bits, DataTypeName(target)),
                       span, "give the view's shape with shape=[...]");
    shape.back() = row_bits / DataTypeBits(target);
  }
  auto view = std::make_shared<TileType>(shape, target, source.memory_space());
  if (view->num_elements() * DataTypeBits(target) != source_bits)
    return TypeError(fmt::format("tile.reinterpret_view of {} as {}: {} bits against {}", source.str(), view->str(),
                                 source_bits, view->num_elements() * DataTypeBits(target)),
                     span);
  return TypePtr(view);
}

Result<TypePtr> DeduceReshape(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  auto tile = ExpectTile(args[0], "the source of pl.reshape", span);
  if (!tile) return pypto::unexpected(tile.error());
  auto shape = StaticInts(args[1], "the new shape", span);
  if (!shape) return pypto::unexpected(shape.error());
  auto target = std::make_shared<TileType>(*shape, (*tile)->dtype(), (*tile)->memory_space());
  if (target->num_elements() != (*tile)->num_elements()) {
    return TypeError(fmt::format("cannot reshape {} to {}: {} elements against {}", (*tile)->str(), ShapeStr(*shape),
                                 (*tile)->num_elements(), target->num_elements()),
                     span);
  }
  return TypePtr(target);
}

// pto.tci fills the first row only, so every dimension but the last must be 1.
Result<TypePtr> DeduceArange(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  const auto* start = args[0]->type()->As<ScalarType>();
  if (!start || !IsInteger(start->dtype()))
    return TypeError(fmt::format("the start of pl.arange must be an integer, got {}", args[0]->type()->str()), span);
  auto shape = StaticInts(args[1], "the shape of pl.arange", span);
  if (!shape) return pypto::unexpected(shape.error());
  if (shape->empty() || shape->back() < 2)
    return TypeError(fmt::format("pl.arange needs a row of at least 2 elements, got {}", ShapeStr(*shape)), span);
  for (size_t d = 0; d + 1 < shape->size(); ++d) {
    if ((*shape)[d] != 1)
      return TypeError(fmt::format("pl.arange fills a single row; every dimension but the last must be 1, got {}",
                                   ShapeStr(*shape)),
                       span, "write the shape as [1, N]");
  }
  const DataType dtype = FindAttr<DataType>(kwargs, "dtype").value_or(DataType::INT32);
  if (dtype != DataType::INT16 && dtype != DataType::INT32 && dtype != DataType::UINT16 && dtype != DataType::UINT32)
    return TypeError(fmt::format("pl.arange makes INT16, INT32, UINT16 or UINT32 tiles, not {}", DataTypeName(dtype)),
                     span);
  return std::make_shared<TileType>(*shape, dtype, MemorySpace::Vec);
}

// Two tiles side by side: [R, C0] and [R, C1] of one dtype make [R, C0 + C1], in Vec. It runs on the
// vector core, as upstream's does (its operands are Vec inputs): a matmul product (an Acc tile) is
// read through its copy in Vec, which InferTileMemorySpace moves it into, and that pass refuses an
// operand in a buffer vector ops cannot read (Mat, Left, Right).
Result<TypePtr> DeduceConcat(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  auto left = ExpectTile(args[0], "the first operand of pl.concat", span);
  if (!left) return pypto::unexpected(left.error());
  auto right = ExpectTile(args[1], "the second operand of pl.concat", span);
  if (!right) return pypto::unexpected(right.error());
  const Shape& a = (*left)->shape();
  const Shape& b = (*right)->shape();
  if (a.size() != 2 || b.size() != 2 || a[0] != b[0] || (*left)->dtype() != (*right)->dtype()) {
    return TypeError(fmt::format("the tiles must be 2-D tiles with the same rows and dtype, got {} and {}",
                                 (*left)->str(), (*right)->str()),
                     span);
  }
  return std::make_shared<TileType>(Shape{a[0], a[1] + b[1]}, (*left)->dtype(), MemorySpace::Vec);
}

// The rows of a matrix tile as its columns, in the same buffer kind: `pl.transpose(t, 0, 1)` (either
// order, or -2/-1; for a tile of higher rank, its last two axes) and `pl.tile.transpose_view(t)`,
// which on a device reinterprets a Mat tile's fractal layout without moving it; either way the value
// is the transposed matrix. The leading dimensions of a batch of matrices stay: each matrix is
// transposed. The valid region is transposed with the matrix.
Result<TypePtr> DeduceTranspose(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  auto tile = ExpectTile(args[0], "the operand of a transpose", span);
  if (!tile) return pypto::unexpected(tile.error());
  const auto rank = static_cast<int64_t>((*tile)->shape().size());
  if (rank < 2) return TypeError(fmt::format("a transpose takes a matrix, got {}", (*tile)->str()), span);
  auto axis1 = FindAttr<int64_t>(kwargs, "axis1"), axis2 = FindAttr<int64_t>(kwargs, "axis2");
  if (axis1 && axis2) {
    const auto normal = [rank](int64_t axis) { return axis < 0 ? axis + rank : axis; };
    const auto is_matrix_axis = [&](int64_t axis) { return normal(axis) == rank - 2 || normal(axis) == rank - 1; };
    if (normal(*axis1) == normal(*axis2) || !is_matrix_axis(*axis1) || !is_matrix_axis(*axis2))
      return TypeError(fmt::format("a {}-D tile transposes axes {} and {} (or -2 and -1), got {} and {}", rank,
                                   rank - 2, rank - 1, *axis1, *axis2),
                       span);
  }
  Shape shape = (*tile)->shape();
  ValidShape valid = (*tile)->valid_shape();
  std::swap(shape[rank - 2], shape[rank - 1]);
  if (!valid.empty()) std::swap(valid[rank - 2], valid[rank - 1]);
  return std::make_shared<TileType>(std::move(shape), (*tile)->dtype(), (*tile)->memory_space(), std::nullopt,
                                    std::move(valid));
}

}  // namespace

void RegisterTileMemoryOps(OpRegistry& registry) {
  registry.Register(OpDef{.name = "tile.load",
                          .description = "copy a region of a global tensor into a Vec or Mat tile",
                          .params = {Arg("tensor"), Arg("offsets"), Arg("shapes"), OptionalArg("valid_shape"),
                                     OptionalAttr("target_memory", OpAttrKind::MemorySpace),
                                     OptionalAttr("clamp", OpAttrKind::Bool)},
                          .deduce_type = DeduceLoad,
                          .reads_tensor_arg = 0});
  registry.Register(OpDef{.name = "tile.store",
                          .description = "copy a Vec or Acc tile into a region of a global tensor",
                          .params = {Arg("tile"), Arg("offsets"), Arg("output_tensor"), OptionalArg("shapes"),
                                     OptionalAttr("atomic", OpAttrKind::String)},
                          .deduce_type = DeduceStore,
                          .writes_arg = 2,
                          .accumulates = IsAtomicStore});
  registry.Register(OpDef{.name = "tile.create",
                          .description = "a fresh (uninitialised) tile: scratch space or an accumulator",
                          .params = {Arg("shape"), Attr("dtype", OpAttrKind::DType),
                                     OptionalAttr("target_memory", OpAttrKind::MemorySpace)},
                          .deduce_type = DeduceCreate});
  registry.Register(OpDef{.name = "tile.full",
                          .description = "a Vec tile with every element set to a value",
                          .params = {Arg("shape"), Attr("dtype", OpAttrKind::DType), Arg("value")},
                          .deduce_type = DeduceFull,
                          .affinity = CoreAffinity::Vector});
  registry.Register(OpDef{.name = "tile.move",
                          .description = "copy a tile into another on-chip buffer (the way into Left/Right/Bias)",
                          .params = {Arg("tile"), Attr("target_memory", OpAttrKind::MemorySpace)},
                          .deduce_type = DeduceMove});
  registry.Register(OpDef{.name = "tile.reshape",
                          .description = "the same elements under another shape (no data moves)",
                          .params = {Arg("tile"), Arg("shape")},
                          .deduce_type = DeduceReshape,
                          .result_aliases_arg = 0});
  registry.Register(OpDef{.name = "tile.reinterpret_view",
                          .description = "the same bytes read as elements of another dtype (no data moves)",
                          .params = {Arg("tile"), Attr("dtype", OpAttrKind::DType), OptionalArg("shape")},
                          .deduce_type = DeduceReinterpretView,
                          .result_aliases_arg = 0});
  registry.Register(OpDef{.name = "tile.ci",
                          .description = "a row of consecutive integers start, start + 1, ... (pl.arange)",
                          .params = {Arg("start"), Arg("shape"), OptionalAttr("dtype", OpAttrKind::DType),
                                     OptionalAttr("descending", OpAttrKind::Bool)},
                          .deduce_type = DeduceArange,
                          .affinity = CoreAffinity::Vector});
  registry.Register(OpDef{.name = "tile.transpose",
                          .description = "the transpose of a 2-D tile (its rows as columns)",
                          .params = {Arg("tile"), Attr("axis1", OpAttrKind::Int), Attr("axis2", OpAttrKind::Int),
                                     OptionalArg("tmp_tile")},
                          .deduce_type = DeduceTranspose});
  registry.Register(OpDef{.name = "tile.transpose_view",
                          .description = "a 2-D tile read transposed (on a device, its fractal layout reinterpreted)",
                          .params = {Arg("tile")},
                          .deduce_type = DeduceTranspose});
  registry.Register(OpDef{.name = "tile.concat",
                          .description = "two tiles side by side: the columns of the first, then the second's",
                          .params = {Arg("src0"), Arg("src1")},
                          .deduce_type = DeduceConcat,
                          .affinity = CoreAffinity::Vector});
}

}  // namespace pypto::ir
