// tile.* ops on a window of a tile (a matrix, for extract and assemble; see MatrixTile): `slice` copies a window out within one buffer kind,
// `extract` copies one into another buffer (Mat -> Left/Right, the way a large operand reaches
// L0 a block at a time; TEXTRACT), and `assemble` writes a tile into a window of another in place
// (TINSERT: Acc -> Mat, Vec -> Vec). A window's origin may be computed in the kernel (a loop
// variable); an origin known here is checked here, any other when the kernel runs.
#include <fmt/format.h>

#include "op_checks.h"

namespace pypto::ir {
namespace {

using namespace ops;

// The window [origin, origin + shape) must lie inside `dims`; origins known only at run time are
// checked there.
Result<bool> CheckWindow(const Offsets& origin, const Shape& shape, const TileType& tile, const Span& span) {
  const Shape& dims = tile.shape();
  if (shape.size() != dims.size() || origin.size() != dims.size()) {
    return TypeError(fmt::format("a window of {} needs {} offsets and sizes, got {} and {}", tile.str(), dims.size(),
                                 OffsetsStr(origin), ShapeStr(shape)),
                     span);
  }
  for (size_t d = 0; d < dims.size(); ++d) {
    const bool outside = shape[d] <= 0 || shape[d] > dims[d] || (origin[d] && (*origin[d] < 0 ||
                                                                                *origin[d] + shape[d] > dims[d]));
    if (outside) {
      return TypeError(fmt::format("the window at {} of shape {} is outside {} (dimension {})", OffsetsStr(origin),
                                   ShapeStr(shape), tile.str(), d),
                       span);
    }
  }
  return true;
}

// A copy of the window [offset, offset + shape) of a tile, in the same buffer kind; `valid_shape=`
// (the fourth argument) narrows the part of it that is valid.
Result<TypePtr> DeduceSlice(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  auto tile = ExpectTile(args[0], "the source of a tile slice", span);
  if (!tile) return pypto::unexpected(tile.error());
  auto shape = StaticInts(args[1], "the shape of a tile slice", span);
  if (!shape) return pypto::unexpected(shape.error());
  auto offsets = ScalarOffsets(args[2], "the offsets of a tile slice", span);
  if (!offsets) return pypto::unexpected(offsets.error());
  if (auto ok = CheckWindow(*offsets, *shape, **tile, span); !ok) return pypto::unexpected(ok.error());
  ValidShape valid;
  if (args.size() > 3) {
    const auto* extents = args[3]->As<TupleLiteral>();
    if (!extents) return TypeError("the valid_shape of a tile slice must be a list of integers", span);
    auto checked = CheckValidShape(extents->elements(), *shape, "the valid_shape of a tile slice", span);
    if (!checked) return pypto::unexpected(checked.error());
    valid = std::move(*checked);
  }
  return std::make_shared<TileType>(*shape, (*tile)->dtype(), (*tile)->memory_space(), std::nullopt,
                                    std::move(valid));
}

// Which buffer-to-buffer window copies the hardware has (TEXTRACT).
bool CanExtract(MemorySpace from, MemorySpace to) {
  using M = MemorySpace;
  return (from == M::Mat && (to == M::Left || to == M::Right || to == M::Mat)) || (from == M::Acc && to == M::Mat) ||
         (from == M::Vec && to == M::Vec);
}

// `tile.extract(src, row, col, [rows, cols], target_memory=...)`: the window at (row, col). The
// window of a source with leading 1s has them too.
Result<TypePtr> DeduceExtract(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  auto tile = ExpectMatrixTile(args[0], "the source of tile.extract", span);
  if (!tile) return pypto::unexpected(tile.error());
  Offsets origin(tile->leading(), 0);
  for (size_t i = 1; i <= 2; ++i) {
    const auto* scalar = args[i]->type()->As<ScalarType>();
    if (!scalar || !IsInteger(scalar->dtype()))
      return TypeError(fmt::format("the {} index of tile.extract must be an integer, got {}", i == 1 ? "row" : "column",
                                   args[i]->type()->str()),
                       span);
    origin.push_back(AsConstInt(args[i]));
  }
  auto shape = StaticInts(args[3], "the shape of tile.extract", span);
  if (!shape) return pypto::unexpected(shape.error());
  if (shape->size() == 2) shape = tile->Reshaped((*shape)[0], (*shape)[1]);
  if (auto ok = CheckWindow(origin, *shape, tile->type(), span); !ok) return pypto::unexpected(ok.error());
  const MemorySpace from = (*tile)->memory_space();
  const MemorySpace to = *FindAttr<MemorySpace>(kwargs, "target_memory");
  if (!CanExtract(from, to)) {
    return TypeError(fmt::format("tile.extract cannot copy a window from {} to {}", MemorySpaceName(from),
                                 MemorySpaceName(to)),
                     span, "windows go Mat -> Left/Right/Mat, Acc -> Mat, Vec -> Vec");
  }
  return std::make_shared<TileType>(*shape, (*tile)->dtype(), to);
}

// Which in-place window writes the hardware has (TINSERT): source space -> target space.
bool CanInsert(MemorySpace from, MemorySpace to) {
  using M = MemorySpace;
  return (from == M::Acc && to == M::Mat) || (from == M::Vec && to == M::Vec) || (from == M::Mat && to == M::Mat);
}

// `tile.assemble(target, source, offset)`: `target` with `source` written at `offset`. The result is
// the target's own buffer (the write is in place).
Result<TypePtr> DeduceAssemble(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  auto target = ExpectMatrixTile(args[0], "the target of tile.assemble", span);
  if (!target) return pypto::unexpected(target.error());
  auto source = ExpectMatrixTile(args[1], "the source of tile.assemble", span);
  if (!source) return pypto::unexpected(source.error());
  auto offsets = ScalarOffsets(args[2], "the offsets of tile.assemble", span);
  if (!offsets) return pypto::unexpected(offsets.error());
  const MemorySpace from = (*source)->memory_space();
  const MemorySpace to = (*target)->memory_space();
  if (!CanInsert(from, to)) {
    return TypeError(fmt::format("tile.assemble cannot write a {} tile into a {} tile", MemorySpaceName(from),
                                 MemorySpaceName(to)),
                     span, "assemble Acc into Mat (a matmul result), or Vec into Vec");
  }
  if ((*source)->dtype() != (*target)->dtype()) {
    return TypeError(fmt::format("tile.assemble writes {} into {}: the dtypes differ", (*source)->str(),
                                 (*target)->str()),
                     span, "convert the source first with pl.cast");
  }
  if (auto ok = CheckWindow(*offsets, (*source)->shape(), target->type(), span); !ok)
    return pypto::unexpected(ok.error());
  return args[0]->type();
}

}  // namespace

void RegisterTileWindowOps(OpRegistry& registry) {
  registry.Register(OpDef{.name = "tile.slice",
                          .description = "a copy of a window of a tile (`t[:, a:b]` inside a kernel)",
                          .params = {Arg("tile"), Arg("shape"), Arg("offset"), OptionalArg("valid_shape")},
                          .deduce_type = DeduceSlice});
  registry.Register(OpDef{.name = "tile.extract",
                          .description = "a copy of a window of a tile into another buffer (Mat -> Left/Right)",
                          .params = {Arg("src"), Arg("index_row"), Arg("index_col"), Arg("shape"),
                                     Attr("target_memory", OpAttrKind::MemorySpace)},
                          .deduce_type = DeduceExtract});
  registry.Register(OpDef{.name = "tile.assemble",
                          .description = "a tile written into a window of another, in place (TINSERT)",
                          .params = {Arg("target"), Arg("source"), Arg("offset")},
                          .deduce_type = DeduceAssemble,
                          .result_aliases_arg = 0});
}

}  // namespace pypto::ir
