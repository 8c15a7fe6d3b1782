// tile.* ops on a tile's valid region: the part of the tile that holds data (a ragged tail loaded
// with `valid_shape=`). `set_validshape` restates the region without moving data; `fillpad` writes a
// pad value everywhere outside it, so that a reduction over the whole tile sees the identity of its
// operation there (the lowest value for a max, zero for a sum). `fillpad_inplace` does so in the
// tile's own buffer, `fillpad_expand` into a larger tile.
#include <fmt/format.h>

#include "op_checks.h"

namespace pypto::ir {
namespace {

using namespace ops;

// The three padding modes the hardware has (PadValue.zero / min / max).
bool IsPadValue(const std::string& pad) { return pad == "zero" || pad == "min" || pad == "max"; }

Result<bool> CheckPadValue(const std::string& op, const Call::Kwargs& kwargs, const Span& span) {
  if (auto pad = FindAttr<std::string>(kwargs, "pad_value"); pad && !IsPadValue(*pad))
    return TypeError(fmt::format("{} pad_value \"{}\" is not a padding mode", op, *pad), span,
                     "pad with pl.PadValue.zero, pl.PadValue.min or pl.PadValue.max");
  return true;
}

// tile.fillpad and tile.fillpad_inplace: the same tile, every element now holding a value.
Result<TypePtr> DeduceFillPad(const std::string& op, const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs,
                              const Span& span) {
  auto tile = ExpectMatrixTile(args[0], fmt::format("the operand of {}", op), span);
  if (!tile) return pypto::unexpected(tile.error());
  if (auto ok = CheckPadValue(op, kwargs, span); !ok) return pypto::unexpected(ok.error());
  // An Acc tile (a product with a narrowed valid region) is padded on the vector core too:
  // InferTileMemorySpace moves it into Vec first.
  const MemorySpace space = (*tile)->memory_space();
  if (space != MemorySpace::Vec && space != MemorySpace::Acc)
    return TypeError(fmt::format("{} pads a Vec or Acc tile, got {}", op, (*tile)->str()), span);
  // Every element now holds a value: the result is valid as a whole.
  return TypePtr(WithValidShape(tile->type(), {}));
}

// tile.fillpad_expand(t, shape): a larger tile holding t's valid region in its top-left corner and the
// pad value everywhere else, valid as a whole.
Result<TypePtr> DeduceFillPadExpand(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  auto tile = ExpectMatrixTile(args[0], "the operand of tile.fillpad_expand", span);
  if (!tile) return pypto::unexpected(tile.error());
  auto shape = StaticInts(args[1], "the shape of tile.fillpad_expand", span);
  if (!shape) return pypto::unexpected(shape.error());
  if (auto ok = CheckPadValue("tile.fillpad_expand", kwargs, span); !ok) return pypto::unexpected(ok.error());
  const Shape& from = (*tile)->shape();
  bool grows = shape->size() == from.size();
  for (size_t d = 0; grows && d < from.size(); ++d) grows = (*shape)[d] >= from[d];
  if (!grows)
    return TypeError(fmt::format("tile.fillpad_expand expands {} to a shape of the same rank and no smaller "
                                 "dimension, got {}",
                                 (*tile)->str(), ShapeStr(*shape)),
                     span, "pl.tile.fillpad pads a tile within its own shape");
  if ((*tile)->memory_space() != MemorySpace::Vec)
    return TypeError(fmt::format("tile.fillpad_expand pads a Vec tile, got {}", (*tile)->str()), span);
  return TypePtr(std::make_shared<TileType>(*shape, (*tile)->dtype(), MemorySpace::Vec));
}

Result<TypePtr> DeduceSetValidShape(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  auto tile = ExpectMatrixTile(args[0], "the operand of tile.set_validshape", span);
  if (!tile) return pypto::unexpected(tile.error());
  // The rows and columns narrow the matrix; a leading dimension stays whole (it is 1).
  auto valid = CheckValidShape(tile->ValidReshaped(args[1], args[2], span), (*tile)->shape(),
                               "the valid shape of tile.set_validshape", span);
  if (!valid) return pypto::unexpected(valid.error());
  return TypePtr(WithValidShape(tile->type(), *valid));
}

}  // namespace

void RegisterTileValidShapeOps(OpRegistry& registry) {
  registry.Register(OpDef{.name = "tile.fillpad",
                          .description = "the tile with every element outside its valid region set to a pad value",
                          .params = {Arg("tile"), OptionalAttr("pad_value", OpAttrKind::String)},
                          .deduce_type = [](const auto& args, const auto& kwargs, const Span& span) {
                            return DeduceFillPad("tile.fillpad", args, kwargs, span);
                          },
                          .affinity = CoreAffinity::Vector,
                          .inplace_safe = true});
  registry.Register(OpDef{.name = "tile.fillpad_inplace",
                          .description = "tile.fillpad writing the pad value into the tile's own buffer",
                          .params = {Arg("tile"), OptionalAttr("pad_value", OpAttrKind::String)},
                          .deduce_type = [](const auto& args, const auto& kwargs, const Span& span) {
                            return DeduceFillPad("tile.fillpad_inplace", args, kwargs, span);
                          },
                          .affinity = CoreAffinity::Vector,
                          .result_aliases_arg = 0});
  // Not in-place: the result's rows are longer than the operand's, so writing one would overwrite
  // operand rows not yet read.
  registry.Register(OpDef{.name = "tile.fillpad_expand",
                          .description = "a larger tile: the operand's valid region in its top-left corner, the "
                                         "pad value everywhere else",
                          .params = {Arg("tile"), Arg("shape"), OptionalAttr("pad_value", OpAttrKind::String)},
                          .deduce_type = DeduceFillPadExpand,
                          .affinity = CoreAffinity::Vector});
  registry.Register(OpDef{.name = "tile.set_validshape",
                          .description = "the same tile with another valid region (no data moves)",
                          .params = {Arg("tile"), Arg("valid_rows"), Arg("valid_cols")},
                          .deduce_type = DeduceSetValidShape,
                          .result_aliases_arg = 0});
}

}  // namespace pypto::ir
