// tile.* ops that move elements by index: gathers that read a source at indices and scatters that
// write a destination at indices. Two index conventions exist, as upstream has them:
//
//  - flat (tile.gather, tile.scatter, the PTO tgather/tscatter index forms): an index addresses the
//    source (destination) tile as one row-major run of elements;
//  - along an axis (tile.gather_dim, tile.scatter_dim, torch.gather / Tensor.scatter_): an index
//    replaces one coordinate, the others being the index's own position.
//
// The scatters are destination-passing: the result is the destination with the written elements
// replaced, every other element kept.
#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "op_checks.h"
#include "pypto/ir/mask_pattern.h"

namespace pypto::ir {
namespace {

using namespace ops;

Result<const TileType*> ExpectVecTile(const ExprPtr& expr, const std::string& what, const Span& span) {
  auto tile = ExpectTile(expr, what, span);
  if (tile && (*tile)->memory_space() != MemorySpace::Vec)
    return TypeError(fmt::format("{} must be a Vec tile, got {}", what, (*tile)->str()), span);
  return tile;
}

// Indices are as wide as the elements they move where the hardware pairs them lane by lane: INT32
// for 4-byte elements, INT16 for 2- and 1-byte ones. `either` also accepts INT32 for narrow elements
// (the gathers, whose 16-bit source reads INT32 indices as well).
Result<bool> CheckIndexDtype(DataType index, DataType element, bool either, const std::string& op,
                             const Span& span) {
  const bool narrow = DataTypeBits(element) <= 16;
  if (index == DataType::INT32 && (!narrow || either)) return true;
  if (index == DataType::INT16 && narrow) return true;
  const std::string expected = !narrow ? "INT32" : either ? "INT32 or INT16" : "INT16";
  return TypeError(fmt::format("the indices of {} into {} elements must be {}, got {}", op, DataTypeName(element),
                               expected, DataTypeName(index)),
                   span);
}

// The axis `dim` of a rank-`rank` tile, negative values counting from the last.
Result<size_t> NormalizeAxis(const Call::Kwargs& kwargs, size_t rank, const std::string& op, const Span& span) {
  const int64_t dim = FindAttr<int64_t>(kwargs, "dim").value_or(-1);
  const auto r = static_cast<int64_t>(rank);
  if (dim < -r || dim >= r)
    return TypeError(fmt::format("dim={} of {} is outside [{}, {}) for a rank-{} tile", dim, op, -r, r, rank), span);
  return static_cast<size_t>(dim < 0 ? dim + r : dim);
}

// `index` reaches into `data` along `axis`: same rank, and no longer than `data` on any other axis.
Result<bool> CheckAlongAxis(const TileType& index, const TileType& data, size_t axis, const std::string& op,
                            const Span& span) {
  if (index.shape().size() != data.shape().size())
    return TypeError(fmt::format("the indices {} of {} must have the rank of {}", index.str(), op, data.str()), span);
  for (size_t d = 0; d < data.shape().size(); ++d) {
    if (d != axis && index.shape()[d] > data.shape()[d])
      return TypeError(fmt::format("the indices {} of {} are longer than {} on axis {}, which is not the one "
                                   "indexed",
                                   index.str(), op, data.str(), d),
                       span);
  }
  return true;
}

// `tile.gather(src, indices[, tmp])`: out[i, j] = src.flat[indices[i, j]], shaped like the indices.
Result<TypePtr> DeduceGather(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  auto src = ExpectVecTile(args[0], "the source of tile.gather", span);
  if (!src) return pypto::unexpected(src.error());
  auto indices = ExpectVecTile(args[1], "the indices of tile.gather", span);
  if (!indices) return pypto::unexpected(indices.error());
  if (auto ok = CheckIndexDtype((*indices)->dtype(), (*src)->dtype(), true, "tile.gather", span); !ok)
    return pypto::unexpected(ok.error());
  return std::make_shared<TileType>((*indices)->shape(), (*src)->dtype(), MemorySpace::Vec);
}

// `tile.gather_dim(src, index, dim=d)`: torch.gather, out[.., j, ..] = src[.., index[.., j, ..], ..]
// with the index replacing coordinate d; shaped like the index.
Result<TypePtr> DeduceGatherDim(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  auto src = ExpectVecTile(args[0], "the source of tile.gather_dim", span);
  if (!src) return pypto::unexpected(src.error());
  auto index = ExpectVecTile(args[1], "the index of tile.gather_dim", span);
  if (!index) return pypto::unexpected(index.error());
  if (auto ok = CheckIndexDtype((*index)->dtype(), (*src)->dtype(), true, "tile.gather_dim", span); !ok)
    return pypto::unexpected(ok.error());
  auto axis = NormalizeAxis(kwargs, (*src)->shape().size(), "tile.gather_dim", span);
  if (!axis) return pypto::unexpected(axis.error());
  if (auto ok = CheckAlongAxis(**index, **src, *axis, "tile.gather_dim", span); !ok)
    return pypto::unexpected(ok.error());
  return std::make_shared<TileType>((*index)->shape(), (*src)->dtype(), MemorySpace::Vec);
}

// The destination and the source of a scatter: Vec tiles of one dtype.
Result<std::pair<const TileType*, const TileType*>> ScatterOperands(const ExprPtr& dst, const ExprPtr& src,
                                                                    const std::string& op, const Span& span) {
  auto to = ExpectVecTile(dst, fmt::format("the destination of {}", op), span);
  if (!to) return pypto::unexpected(to.error());
  auto from = ExpectVecTile(src, fmt::format("the source of {}", op), span);
  if (!from) return pypto::unexpected(from.error());
  if ((*to)->dtype() != (*from)->dtype())
    return TypeError(fmt::format("the source {} of {} must have the dtype of the destination {}", (*from)->str(), op,
                                 (*to)->str()),
                     span);
  return std::pair(*to, *from);
}

TypePtr DestinationType(const TileType& dst) {
  return std::make_shared<TileType>(dst.shape(), dst.dtype(), MemorySpace::Vec);
}

// `tile.scatter(dst, src, indexes)`: dst.flat[indexes[i, j]] = src[i, j].
Result<TypePtr> DeduceScatter(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  auto operands = ScatterOperands(args[0], args[1], "tile.scatter", span);
  if (!operands) return pypto::unexpected(operands.error());
  const auto [dst, src] = *operands;
  auto indexes = ExpectVecTile(args[2], "the indexes of tile.scatter", span);
  if (!indexes) return pypto::unexpected(indexes.error());
  if (auto ok = CheckIndexDtype((*indexes)->dtype(), dst->dtype(), false, "tile.scatter", span); !ok)
    return pypto::unexpected(ok.error());
  if ((*indexes)->shape() != src->shape())
    return TypeError(fmt::format("the indexes {} of tile.scatter must have the shape of the source {}",
                                 (*indexes)->str(), src->str()),
                     span);
  return DestinationType(*dst);
}

// `tile.scatter_dim(input, index, src, dim=d)`: Tensor.scatter_, out[.., index[.., j, ..], ..] =
// src[.., j, ..] with the index replacing coordinate d; the index has the source's shape.
Result<TypePtr> DeduceScatterDim(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  auto operands = ScatterOperands(args[0], args[2], "tile.scatter_dim", span);
  if (!operands) return pypto::unexpected(operands.error());
  const auto [input, src] = *operands;
  auto index = ExpectVecTile(args[1], "the index of tile.scatter_dim", span);
  if (!index) return pypto::unexpected(index.error());
  if (auto ok = CheckIndexDtype((*index)->dtype(), input->dtype(), false, "tile.scatter_dim", span); !ok)
    return pypto::unexpected(ok.error());
  if ((*index)->shape() != src->shape())
    return TypeError(fmt::format("the index {} of tile.scatter_dim must have the shape of the source {}",
                                 (*index)->str(), src->str()),
                     span);
  auto axis = NormalizeAxis(kwargs, input->shape().size(), "tile.scatter_dim", span);
  if (!axis) return pypto::unexpected(axis.error());
  if (auto ok = CheckAlongAxis(**index, *input, *axis, "tile.scatter_dim", span); !ok)
    return pypto::unexpected(ok.error());
  return DestinationType(*input);
}

// `tile.scatter_mask(dst, src, mask_pattern=p)`: the inverse of tile.gather_mask, each row of src
// written into the lanes of the same row of dst that the pattern selects.
Result<TypePtr> DeduceScatterMask(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  auto operands = ScatterOperands(args[0], args[1], "tile.scatter_mask", span);
  if (!operands) return pypto::unexpected(operands.error());
  const auto [dst_tile, src_tile] = *operands;
  auto dst = ExpectMatrixTile(args[0], "the destination of tile.scatter_mask", span);
  if (!dst) return pypto::unexpected(dst.error());
  auto src = ExpectMatrixTile(args[1], "the source of tile.scatter_mask", span);
  if (!src) return pypto::unexpected(src.error());
  const int bits = DataTypeBits(dst_tile->dtype());
  if (bits != 16 && bits != 32)
    return TypeError(fmt::format("tile.scatter_mask writes 16- or 32-bit lanes, got {}",
                                 DataTypeName(dst_tile->dtype())),
                     span);
  const int64_t pattern = *FindAttr<int64_t>(kwargs, "mask_pattern");
  if (!IsMaskPattern(pattern))
    return TypeError(fmt::format("mask_pattern must be one of pl.tile.MaskPattern (1 to 7), got {}", pattern), span);
  const MaskLanes lanes = LanesOf(pattern);
  if (dst->rows() != src->rows() || dst->cols() != src->cols() * lanes.group)
    return TypeError(fmt::format("mask pattern {} writes one lane of every {}, so the destination of {} must be "
                                 "[{}, {}], got {}",
                                 MaskPatternName(pattern), lanes.group, src_tile->str(), src->rows(),
                                 src->cols() * lanes.group, dst_tile->str()),
                     span);
  return DestinationType(*dst_tile);
}

// `tile.scatter_update(input, index, src, dim=-2)`: whole rows written at the row numbers of an
// index [b, s]. 2-D: input [rows, d], src [b * s, d]; 4-D (a paged cache): input
// [blocks, block_size, 1, d], src [b, s, 1, d], rows counted across the blocks.
Result<TypePtr> DeduceScatterUpdate(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  auto operands = ScatterOperands(args[0], args[2], "tile.scatter_update", span);
  if (!operands) return pypto::unexpected(operands.error());
  const auto [input, src] = *operands;
  auto index = ExpectVecTile(args[1], "the index of tile.scatter_update", span);
  if (!index) return pypto::unexpected(index.error());
  if (const int64_t dim = FindAttr<int64_t>(kwargs, "dim").value_or(-2); dim != -2)
    return TypeError(fmt::format("tile.scatter_update writes rows: dim must be -2, got {}", dim), span);
  const Shape& in = input->shape();
  const Shape& from = src->shape();
  const Shape& at = (*index)->shape();
  if (at.size() != 2 || !IsInteger((*index)->dtype()))
    return TypeError(fmt::format("the index of tile.scatter_update must be a 2-D integer tile [b, s], got {}",
                                 (*index)->str()),
                     span);
  const bool flat = in.size() == 2 && from.size() == 2 && from[0] == at[0] * at[1] && from[1] == in[1];
  const bool paged = in.size() == 4 && from.size() == 4 && in[2] == 1 && from[2] == 1 && from[0] == at[0] &&
                     from[1] == at[1] && from[3] == in[3];
  if (!flat && !paged)
    return TypeError(fmt::format("tile.scatter_update takes input [rows, d] with src [b * s, d], or input "
                                 "[blocks, block_size, 1, d] with src [b, s, 1, d], for the index [b, s]; got input "
                                 "{}, src {}, index {}",
                                 input->str(), src->str(), (*index)->str()),
                     span);
  return DestinationType(*input);
}

// `tile.mscatter(src, idx, output)`: output.flat[idx[i, j]] = src[i, j], a store of each element of a
// tile at the flat (row-major) index of the tensor that the same position of idx holds.
Result<TypePtr> DeduceMscatter(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  auto src = ExpectVecTile(args[0], "the source of pl.mscatter", span);
  if (!src) return pypto::unexpected(src.error());
  auto idx = ExpectVecTile(args[1], "the indices of pl.mscatter", span);
  if (!idx) return pypto::unexpected(idx.error());
  auto out = ExpectTensor(args[2], "the output of pl.mscatter", span);
  if (!out) return pypto::unexpected(out.error());
  const DataType dtype = (*src)->dtype();
  if (dtype != DataType::FP16 && dtype != DataType::FP32 && dtype != DataType::INT16 && dtype != DataType::INT32)
    return TypeError(fmt::format("pl.mscatter stores FP16, FP32, INT16 or INT32 elements, got {}", DataTypeName(dtype)),
                     span);
  if ((*idx)->dtype() != DataType::INT32 || (*idx)->shape() != (*src)->shape())
    return TypeError(fmt::format("the indices of pl.mscatter must be an INT32 tile of the source's shape {}, got {}",
                                 ShapeStr((*src)->shape()), (*idx)->str()),
                     span);
  if ((*out)->dtype() != dtype)
    return TypeError(fmt::format("pl.mscatter stores a {} tile into the tensor {} of another dtype",
                                 DataTypeName(dtype), (*out)->str()),
                     span);
  return std::make_shared<TensorType>((*out)->shape(), dtype);
}

// `tile.paged_gather(src, indices, block_table, block_size=, size=, max_indices=[, space=, col_off=])`:
// row i of the result is row block_table[l / block_size] * block_size + l % block_size of the pool
// src, columns [col_off, col_off + size), for the logical row l = indices[i]; [max_indices, size] in
// Mat (the default, a matmul operand) or Vec. Only the first n rows are gathered, n the indices'
// length (at run time where it is dynamic, at most max_indices); as upstream's, the rows past n are
// not written, so what they hold is undefined.
Result<TypePtr> DeducePagedGather(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  auto src = ExpectTensor(args[0], "the pool of pl.paged_gather", span);
  if (!src) return pypto::unexpected(src.error());
  if ((*src)->shape().size() != 2)
    return TypeError(fmt::format("the pool of pl.paged_gather must be a 2-D tensor, got {}", (*src)->str()), span);
  for (size_t i : {1, 2}) {
    auto table = ExpectTensor(args[i], i == 1 ? "the indices of pl.paged_gather" : "the block table of pl.paged_gather",
                              span);
    if (!table) return pypto::unexpected(table.error());
    if ((*table)->dtype() != DataType::INT32)
      return TypeError(fmt::format("the {} of pl.paged_gather must be INT32, got {}",
                                   i == 1 ? "indices" : "block table", (*table)->str()),
                       span);
  }
  const int64_t block_size = *FindAttr<int64_t>(kwargs, "block_size");
  const int64_t size = *FindAttr<int64_t>(kwargs, "size");
  const int64_t rows = *FindAttr<int64_t>(kwargs, "max_indices");
  const int64_t col_off = FindAttr<int64_t>(kwargs, "col_off").value_or(0);
  if (block_size <= 0 || size <= 0 || rows <= 0)
    return TypeError("block_size, size and max_indices of pl.paged_gather must be positive", span);
  if (col_off < 0 || col_off + size > (*src)->shape()[1])
    return TypeError(fmt::format("columns [{}, {}) of pl.paged_gather are outside the pool {}", col_off,
                                 col_off + size, (*src)->str()),
                     span);
  if (FindAttr<bool>(kwargs, "is_trans").value_or(false))
    return TypeError("pl.paged_gather with is_trans=True (a transposed Mat tile) is not supported yet", span);
  const MemorySpace space = FindAttr<MemorySpace>(kwargs, "space").value_or(MemorySpace::Mat);
  if (space != MemorySpace::Mat && space != MemorySpace::Vec)
    return TypeError(fmt::format("pl.paged_gather gathers into Mat or Vec, not {}", MemorySpaceName(space)), span);
  return std::make_shared<TileType>(Shape{rows, size}, (*src)->dtype(), space);
}

constexpr std::string_view kCompareModes[] = {"eq", "ne", "lt", "le", "gt", "ge"};

// The compare form of the gather, `(src, kvalue[, tmp], cmp_mode=..., out_cols=N)`: src a 2-D Vec
// tile of FP16/FP32/INT16/INT32 and kvalue a scalar of its dtype.
Result<MatrixTile> CompareOperands(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const std::string& op,
                                   const Span& span) {
  auto src = ExpectMatrixTile(args[0], fmt::format("the source of {}", op), span);
  if (!src) return src;
  const DataType dtype = (*src)->dtype();
  if (dtype != DataType::FP16 && dtype != DataType::FP32 && dtype != DataType::INT16 && dtype != DataType::INT32)
    return TypeError(fmt::format("{} compares FP16, FP32, INT16 or INT32 elements, got {}", op, DataTypeName(dtype)),
                     span);
  const auto* kvalue = args[1]->type()->As<ScalarType>();
  if (!kvalue || kvalue->dtype() != dtype)
    return TypeError(fmt::format("the kvalue of {} must be a {} scalar (the source's dtype), got {}", op,
                                 DataTypeName(dtype), args[1]->type()->str()),
                     span);
  const std::string mode = FindAttr<std::string>(kwargs, "cmp_mode").value_or("eq");
  if (std::find(std::begin(kCompareModes), std::end(kCompareModes), mode) == std::end(kCompareModes))
    return TypeError(fmt::format("cmp_mode of {} must be one of eq, ne, lt, le, gt, ge, got '{}'", op, mode), span);
  if (*FindAttr<int64_t>(kwargs, "out_cols") <= 0)
    return TypeError(fmt::format("out_cols of {} must be positive, got {}", op, *FindAttr<int64_t>(kwargs, "out_cols")),
                     span);
  return src;
}

// `tile.gather_compare(...)`: per row, the columns (plus `offset`) of the first out_cols elements that
// compare true against kvalue, INT32 [rows, out_cols].
Result<TypePtr> DeduceGatherCompare(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  auto src = CompareOperands(args, kwargs, "tile.gather_compare", span);
  if (!src) return pypto::unexpected(src.error());
  return std::make_shared<TileType>(Shape{src->rows(), *FindAttr<int64_t>(kwargs, "out_cols")}, DataType::INT32,
                                    MemorySpace::Vec);
}

// `tile.gather_compare_count(...)`: per row, how many elements compare true, [1, rows] of
// count_dtype (INT32 or UINT32).
Result<TypePtr> DeduceGatherCompareCount(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs,
                                         const Span& span) {
  auto src = CompareOperands(args, kwargs, "tile.gather_compare_count", span);
  if (!src) return pypto::unexpected(src.error());
  const DataType count = FindAttr<DataType>(kwargs, "count_dtype").value_or(DataType::INT32);
  if (count != DataType::INT32 && count != DataType::UINT32)
    return TypeError(fmt::format("count_dtype of tile.gather_compare_count must be INT32 or UINT32, got {}",
                                 DataTypeName(count)),
                     span);
  return std::make_shared<TileType>(Shape{1, src->rows()}, count, MemorySpace::Vec);
}

}  // namespace

void RegisterTileIndexOps(OpRegistry& registry) {
  registry.Register(OpDef{.name = "tile.gather",
                          .description = "pick elements of the source by flat (row-major) indices",
                          .params = {Arg("src"), Arg("indices"), OptionalArg("tmp")},
                          .deduce_type = DeduceGather,
                          .affinity = CoreAffinity::Vector});
  registry.Register(OpDef{.name = "tile.gather_dim",
                          .description = "pick elements along one axis by an index tile (torch.gather)",
                          .params = {Arg("src"), Arg("index"), OptionalAttr("dim", OpAttrKind::Int)},
                          .deduce_type = DeduceGatherDim,
                          .affinity = CoreAffinity::Vector});
  // The two results of upstream's compare-form gather (pto.tgather with kvalue), one op each.
  const std::vector<OpParam> compare = {Arg("src"),
                                        Arg("kvalue"),
                                        OptionalArg("tmp"),
                                        OptionalAttr("cmp_mode", OpAttrKind::String),
                                        OptionalAttr("offset", OpAttrKind::Int),
                                        Attr("out_cols", OpAttrKind::Int),
                                        OptionalAttr("count_dtype", OpAttrKind::DType)};
  registry.Register(OpDef{.name = "tile.gather_compare",
                          .description = "per row, the columns whose elements compare true against kvalue",
                          .params = compare,
                          .deduce_type = DeduceGatherCompare,
                          .affinity = CoreAffinity::Vector});
  registry.Register(OpDef{.name = "tile.gather_compare_count",
                          .description = "per row, how many elements compare true against kvalue",
                          .params = compare,
                          .deduce_type = DeduceGatherCompareCount,
                          .affinity = CoreAffinity::Vector});
  registry.Register(OpDef{.name = "tile.scatter",
                          .description = "the destination with src written at flat (row-major) indexes",
                          .params = {Arg("dst"), Arg("src"), Arg("indexes")},
                          .deduce_type = DeduceScatter,
                          .affinity = CoreAffinity::Vector});
  registry.Register(OpDef{.name = "tile.scatter_dim",
                          .description = "the input with src written along one axis at an index tile "
                                         "(Tensor.scatter_, later writes winning)",
                          .params = {Arg("input"), Arg("index"), Arg("src"), OptionalAttr("dim", OpAttrKind::Int)},
                          .deduce_type = DeduceScatterDim,
                          .affinity = CoreAffinity::Vector});
  registry.Register(OpDef{.name = "tile.mscatter",
                          .description = "store each element of a tile at the flat index of a tensor an index tile "
                                         "holds",
                          .params = {Arg("src"), Arg("idx"), Arg("output_tensor")},
                          .deduce_type = DeduceMscatter,
                          .affinity = CoreAffinity::Vector,
                          .writes_arg = 2});
  registry.Register(OpDef{.name = "tile.paged_gather",
                          .description = "rows of a paged pool, at logical rows an index tensor holds, translated "
                                         "through a block table (is_b_matrix: a hint for the device's layout)",
                          .params = {Arg("src"), Arg("indices"), Arg("block_table"),
                                     Attr("block_size", OpAttrKind::Int), Attr("size", OpAttrKind::Int),
                                     Attr("max_indices", OpAttrKind::Int), OptionalAttr("space", OpAttrKind::MemorySpace),
                                     OptionalAttr("col_off", OpAttrKind::Int),
                                     OptionalAttr("is_trans", OpAttrKind::Bool),
                                     OptionalAttr("is_b_matrix", OpAttrKind::Bool)},
                          .deduce_type = DeducePagedGather,
                          .reads_tensor_arg = 0});
  registry.Register(OpDef{.name = "tile.scatter_mask",
                          .description = "the destination with each row of src written into the lanes a mask "
                                         "pattern selects",
                          .params = {Arg("dst"), Arg("src"), Attr("mask_pattern", OpAttrKind::Int)},
                          .deduce_type = DeduceScatterMask,
                          .affinity = CoreAffinity::Vector});
  registry.Register(OpDef{.name = "tile.scatter_update",
                          .description = "the input with whole rows of src written at the row numbers of an index",
                          .params = {Arg("input"), Arg("index"), Arg("src"), OptionalAttr("dim", OpAttrKind::Int)},
                          .deduce_type = DeduceScatterUpdate,
                          .affinity = CoreAffinity::Vector});
}

}  // namespace pypto::ir
