// tile.* gathers that move whole runs of bytes rather than single elements of a tile:
//
//  - tile.gatherb (pto.tgatherb): 32-byte blocks of a Vec tile, each picked by a UINT32 *byte*
//    offset, so one offset column becomes 32 / sizeof(output_dtype) result columns;
//  - tile.mgather (pto.mgather): rows or single elements of a global tensor, picked by INT32
//    indices, into a fresh Vec tile (indices in a tile) or Mat tile (indices in a tensor).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string_view>

#include "op_checks.h"

namespace pypto::ir {
namespace {

using namespace ops;

constexpr int64_t kBlockBytes = 32;

// mgather also moves the 8-bit floats (a5).
bool IsMgatherDtype(DataType dtype) {
  return IsVectorWordDtype(dtype) || dtype == DataType::FP8E4M3FN || dtype == DataType::FP8E5M2 || dtype == DataType::HF8;
}

constexpr std::string_view kGatherDtypes = "INT8, UINT8, INT16, UINT16, INT32, UINT32, FP16, BF16 or FP32";

Result<const TileType*> ExpectVec2D(const ExprPtr& expr, const std::string& what, const Span& span) {
  auto tile = ExpectTile(expr, what, span);
  if (!tile) return tile;
  if ((*tile)->memory_space() != MemorySpace::Vec)
    return TypeError(fmt::format("{} must be a Vec tile, got {}", what, (*tile)->str()), span);
  if ((*tile)->shape().size() != 2)
    return TypeError(fmt::format("{} must be a 2-D tile, got {}", what, (*tile)->str()), span);
  return tile;
}

ExprPtr Index(int64_t value, const Span& span) { return std::make_shared<ConstInt>(value, DataType::INDEX, span); }

// `tile.gatherb(src, offset[, output_dtype=])`: row r, block c of the result (32 bytes) is the 32
// bytes of src starting at byte offset[r, c]. The result reads those bytes as output_dtype (src's by
// default), so it is [rows, cols * 32 / sizeof(output_dtype)], and its valid region is the offset
// tile's with the columns scaled alike.
Result<TypePtr> DeduceGatherb(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  auto src = ExpectVec2D(args[0], "the source of tile.gatherb", span);
  if (!src) return pypto::unexpected(src.error());
  auto offset = ExpectVec2D(args[1], "the offsets of tile.gatherb", span);
  if (!offset) return pypto::unexpected(offset.error());
  const DataType out_dtype = FindAttr<DataType>(kwargs, "output_dtype").value_or((*src)->dtype());
  for (auto [dtype, role] : {std::pair{(*src)->dtype(), "source"}, std::pair{out_dtype, "output_dtype"}}) {
    if (!IsVectorWordDtype(dtype))
      return TypeError(fmt::format("the {} of tile.gatherb must be {}, got {}", role, kGatherDtypes,
                                   DataTypeName(dtype)),
                       span);
  }
  if ((*offset)->dtype() != DataType::UINT32)
    return TypeError(fmt::format("the offsets of tile.gatherb must be UINT32 byte offsets, got {}",
                                 DataTypeName((*offset)->dtype())),
                     span);
  const int64_t offset_cols = (*offset)->shape()[1];
  if (offset_cols % 8 != 0)
    return TypeError(fmt::format("the offsets of tile.gatherb must have a multiple of 8 columns (whole 32-byte rows "
                                 "of UINT32), got {}",
                                 (*offset)->str()),
                     span, "pad each row of offsets to a multiple of 8 and narrow it with valid_shape");
  const int64_t per_block = kBlockBytes / DataTypeBytes(out_dtype);
  Shape shape = {(*offset)->shape()[0], offset_cols * per_block};
  ValidShape valid;
  if ((*offset)->has_partial_valid_shape()) {
    const auto& extents = (*offset)->valid_shape();
    auto cols = MakeBinary(BinaryOp::Mul, extents[1], Index(per_block, span), span);
    if (!cols) return pypto::unexpected(cols.error());
    valid = {extents[0], *cols};
  }
  return std::make_shared<TileType>(std::move(shape), out_dtype, MemorySpace::Vec, std::nullopt, std::move(valid));
}

// ---------------------------------------------------------------------------------------------
// tile.mgather(mem, idx[, scratch][, valid_shape], coalesce=, gather_oob=, target_memory=)
//
// coalesce="row" (the default): result row i is row idx[i] of mem, read as [rows, mem.shape[-1]];
// coalesce="elem": result element (i, j) is element idx[i, j] of mem, flat (row-major).
// Indices are read as unsigned 32-bit values, so a negative one is past the end. gather_oob says
// what an index past the end reads: "undefined" (nothing defines it), "clamp" (the last row or
// element), "wrap" (the index modulo the count) or "zero" (zeros).
//
// Vec result (the default): idx is a 2-D INT32 tile ([1, R] or [R, 1] rows for row mode) and its
// valid region decides the result's. Mat result: idx is an INT32 tensor ([1, R] for row mode),
// the result [rows, cols] is an NZ matrix (rows a multiple of 16, cols of 32 bytes), element mode
// stages through a global `scratch` tensor, and `valid_shape=` may narrow what is written.
// The optional operands close up: in Mat row mode the third argument is the valid shape.
// ---------------------------------------------------------------------------------------------

constexpr std::string_view kCoalesceModes[] = {"row", "elem"};
constexpr std::string_view kOobModes[] = {"undefined", "clamp", "wrap", "zero"};

template <size_t N>
Result<std::string> ChooseMode(const Call::Kwargs& kwargs, const char* key, const std::string_view (&modes)[N],
                               const Span& span) {
  const std::string mode = FindAttr<std::string>(kwargs, key).value_or(std::string(modes[0]));
  for (auto known : modes)
    if (mode == known) return mode;
  std::vector<std::string> quoted;
  for (auto known : modes) quoted.push_back(fmt::format("\"{}\"", known));
  return TypeError(fmt::format("{} of tile.mgather must be one of {}, got \"{}\"", key, fmt::join(quoted, ", "), mode),
                   span);
}

// The INT32 index operand, a Vec tile or (Mat result) a tensor: its shape and valid region.
struct IndexOperand {
  Shape shape;
  ValidShape valid;  // empty: all of it
};

Result<IndexOperand> MgatherIndices(const ExprPtr& idx, MemorySpace target, const Span& span) {
  const Type& type = *idx->type();
  DataType dtype;
  IndexOperand operand;
  if (target == MemorySpace::Vec) {
    const auto* tile = type.As<TileType>();
    if (!tile)
      return TypeError(fmt::format("the indices of tile.mgather into a Vec tile must be a tile, got {}", type.str()),
                       span, "a Mat result (target_memory=pl.Mem.Mat) reads its indices from a tensor");
    dtype = tile->dtype();
    operand = {tile->shape(), tile->valid_shape()};
  } else {
    const auto* tensor = type.As<TensorType>();
    if (!tensor)
      return TypeError(fmt::format("the indices of tile.mgather into a Mat tile must be a tensor, got {}", type.str()),
                       span, "a Vec result reads its indices from a tile");
    dtype = tensor->dtype();
    operand = {tensor->shape(), {}};
  }
  if (dtype != DataType::INT32)
    return TypeError(fmt::format("the indices of tile.mgather must be INT32, got {}", DataTypeName(dtype)), span);
  if (operand.shape.size() != 2)
    return TypeError(fmt::format("the indices of tile.mgather must be 2-D, got {}", type.str()), span);
  return operand;
}

// Row mode: R rows picked by a [1, R] index row, or by an [R, 1] column (Vec only).
Result<IndexOperand> RowsPicked(const IndexOperand& idx, const TensorType& mem, MemorySpace target,
                                const Span& span) {
  if (mem.shape().size() < 2)
    return TypeError(fmt::format("tile.mgather with coalesce=\"row\" gathers rows of a tensor of rank 2 or more, "
                                 "got {}",
                                 mem.str()),
                     span, "gather single elements with coalesce=\"elem\"");
  const bool row = idx.shape[0] == 1;
  const bool column = idx.shape[1] == 1 && target == MemorySpace::Vec;
  if (!row && !column)
    return TypeError(fmt::format("the indices of tile.mgather with coalesce=\"row\" must be [1, R]{}, got {}",
                                 target == MemorySpace::Vec ? " or [R, 1]" : "", ShapeStr(idx.shape)),
                     span);
  const size_t along = row ? 1 : 0;
  IndexOperand result{{idx.shape[along], mem.shape().back()}, {}};
  if (!idx.valid.empty()) result.valid = {idx.valid[along], Index(mem.shape().back(), span)};
  return result;
}

// Mat element mode's staging tensor: of mem's dtype, distinct from mem and idx, and no smaller
// than the result.
Result<bool> CheckScratch(const std::vector<ExprPtr>& args, const TensorType& mem, const Shape& out,
                          const Span& span) {
  auto scratch = ExpectTensor(args[2], "the scratch of tile.mgather", span);
  if (!scratch) return pypto::unexpected(scratch.error());
  if (args[2].get() == args[0].get() || args[2].get() == args[1].get())
    return TypeError("the scratch of tile.mgather must be a tensor of its own, not mem or idx", span);
  if ((*scratch)->dtype() != mem.dtype())
    return TypeError(fmt::format("the scratch {} of tile.mgather must have the dtype of mem {}", (*scratch)->str(),
                                 mem.str()),
                     span);
  const int64_t needed = out[0] * out[1];
  if ((*scratch)->num_elements() < needed)
    return TypeError(fmt::format("the scratch {} of tile.mgather holds {} elements; the result needs {}",
                                 (*scratch)->str(), (*scratch)->num_elements(), needed),
                     span);
  return true;
}

// The Mat result's `valid_shape=[r, c]`: constants within the result.
Result<ValidShape> MatValidShape(const ExprPtr& arg, const Shape& shape, const Span& span) {
  const auto* extents = arg->As<TupleLiteral>();
  if (!extents)
    return TypeError(fmt::format("the valid_shape of tile.mgather must be a list of integers, got {}",
                                 arg->type()->str()),
                     span);
  auto valid = CheckValidShape(extents->elements(), shape, "the valid_shape of tile.mgather", span);
  if (!valid) return valid;
  for (const auto& extent : extents->elements()) {
    auto value = AsConstInt(extent);
    if (!value || *value == 0)
      return TypeError("the valid_shape of tile.mgather must be positive integers known at compile time", span);
  }
  return valid;
}

Result<TypePtr> DeduceMgather(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  auto mem = ExpectTensor(args[0], "the source (mem) of tile.mgather", span);
  if (!mem) return pypto::unexpected(mem.error());
  if (!IsMgatherDtype((*mem)->dtype()))
    return TypeError(fmt::format("tile.mgather moves {} or the FP8 types, got {}", kGatherDtypes, (*mem)->str()),
                     span);
  auto coalesce = ChooseMode(kwargs, "coalesce", kCoalesceModes, span);
  if (!coalesce) return pypto::unexpected(coalesce.error());
  if (auto oob = ChooseMode(kwargs, "gather_oob", kOobModes, span); !oob) return pypto::unexpected(oob.error());
  const MemorySpace target = FindAttr<MemorySpace>(kwargs, "target_memory").value_or(MemorySpace::Vec);
  if (target != MemorySpace::Vec && target != MemorySpace::Mat)
    return TypeError(fmt::format("tile.mgather gathers into Vec or Mat, not {}", MemorySpaceName(target)), span);
  auto idx = MgatherIndices(args[1], target, span);
  if (!idx) return pypto::unexpected(idx.error());
  const bool rows = *coalesce == "row";
  IndexOperand out = *idx;  // element mode: shaped like the indices
  if (rows) {
    auto picked = RowsPicked(*idx, **mem, target, span);
    if (!picked) return pypto::unexpected(picked.error());
    out = *picked;
  }
  const auto dtype = (*mem)->dtype();
  if (target == MemorySpace::Vec) {
    if (args.size() > 2)
      return TypeError("tile.mgather into a Vec tile takes neither scratch= nor valid_shape= (its valid region is "
                       "the indices')",
                       span);
    return std::make_shared<TileType>(out.shape, dtype, MemorySpace::Vec, std::nullopt, out.valid);
  }
  // Mat: an NZ matrix of 16-row fractals whose rows are 32 bytes.
  const int64_t c0 = kBlockBytes / DataTypeBytes(dtype);
  if (out.shape[0] % 16 != 0 || out.shape[1] % c0 != 0)
    return TypeError(fmt::format("tile.mgather into a Mat tile needs rows a multiple of 16 and columns a multiple of "
                                 "{} (32 bytes of {}), got {}",
                                 c0, DataTypeName(dtype), ShapeStr(out.shape)),
                     span);
  size_t next = 2;
  if (!rows) {
    if (args.size() < 3)
      return TypeError("tile.mgather with coalesce=\"elem\" into a Mat tile needs scratch=, a tensor of mem's dtype "
                       "to stage the elements in",
                       span);
    if (auto ok = CheckScratch(args, **mem, out.shape, span); !ok) return pypto::unexpected(ok.error());
    next = 3;
  } else if (args.size() > 2 && args[2]->type()->As<TensorType>()) {
    return TypeError("tile.mgather with coalesce=\"row\" takes no scratch= (only element mode stages through one)",
                     span);
  }
  ValidShape valid;
  if (args.size() > next) {
    auto narrowed = MatValidShape(args[next], out.shape, span);
    if (!narrowed) return pypto::unexpected(narrowed.error());
    valid = *narrowed;
  }
  if (args.size() > next + 1) return TypeError("tile.mgather takes at most mem, idx, scratch and valid_shape", span);
  return std::make_shared<TileType>(out.shape, dtype, MemorySpace::Mat, std::nullopt, std::move(valid));
}

}  // namespace

void RegisterTileGatherOps(OpRegistry& registry) {
  registry.Register(OpDef{.name = "tile.gatherb",
                          .description = "32-byte blocks of a tile, each at a UINT32 byte offset",
                          .params = {Arg("src"), Arg("offset"), OptionalAttr("output_dtype", OpAttrKind::DType)},
                          .deduce_type = DeduceGatherb,
                          .affinity = CoreAffinity::Vector});
  registry.Register(OpDef{.name = "tile.mgather",
                          .description = "rows or elements of a global tensor at INT32 indices, into a fresh Vec or "
                                         "Mat tile",
                          .params = {Arg("mem"), Arg("idx"), OptionalArg("scratch"), OptionalArg("valid_shape"),
                                     OptionalAttr("coalesce", OpAttrKind::String),
                                     OptionalAttr("gather_oob", OpAttrKind::String),
                                     OptionalAttr("target_memory", OpAttrKind::MemorySpace)},
                          .deduce_type = DeduceMgather,
                          .reads_tensor_arg = 0});
}

}  // namespace pypto::ir
