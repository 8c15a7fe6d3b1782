// tile.* ops on a tile's valid region: the part of the tile that holds data (a ragged tail loaded
// with `valid_shape=`). `set_validshape` restates the region without moving data; `fillpad` writes a
// pad value everywhere outside it, so that a reduction over the whole tile sees the identity of its
// operation there (the lowest value for a max, zero for a sum).
#include <fmt/format.h>

#include "op_checks.h"

namespace pypto::ir {
namespace {

using namespace ops;

// The three padding modes the hardware has (PadValue.zero / min / max).
bool IsPadValue(const std::string& pad) { return pad == "zero" || pad == "min" || pad == "max"; }

Result<TypePtr> DeduceFillPad(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  auto tile = ExpectMatrixTile(args[0], "the operand of tile.fillpad", span);
  if (!tile) return pypto::unexpected(tile.error());
  if (auto pad = FindAttr<std::string>(kwargs, "pad_value"); pad && !IsPadValue(*pad))
    return TypeError(fmt::format("tile.fillpad pad_value \"{}\" is not a padding mode", *pad), span,
                     "pad with pl.PadValue.zero, pl.PadValue.min or pl.PadValue.max");
  // An Acc tile (a product with a narrowed valid region) is padded on the vector core too:
  // InferTileMemorySpace moves it into Vec first.
  const MemorySpace space = (*tile)->memory_space();
  if (space != MemorySpace::Vec && space != MemorySpace::Acc)
    return TypeError(fmt::format("tile.fillpad pads a Vec or Acc tile, got {}", (*tile)->str()), span);
  // Every element now holds a value: the result is valid as a whole.
  return TypePtr(WithValidShape(tile->type(), {}));
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
                          .deduce_type = DeduceFillPad,
                          .affinity = CoreAffinity::Vector,
                          .inplace_safe = true});
  registry.Register(OpDef{.name = "tile.set_validshape",
                          .description = "the same tile with another valid region (no data moves)",
                          .params = {Arg("tile"), Arg("valid_rows"), Arg("valid_cols")},
                          .deduce_type = DeduceSetValidShape,
                          .result_aliases_arg = 0});
}

}  // namespace pypto::ir
