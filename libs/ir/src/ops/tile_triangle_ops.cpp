// tile.tri: a lower- or upper-triangular mask tile (TTRI), as torch.tril / torch.triu of a tile of
// ones. Lower keeps the elements with col <= row + diagonal, upper those with col >= row + diagonal;
// they hold 1, the others 0. Only the valid region is written.
#include <fmt/format.h>

#include "op_checks.h"

namespace pypto::ir {
namespace {

using namespace ops;

// `tile.tri(diagonal, shape[, valid_shape], dtype=..., upper=...)`: a 2-D Vec tile of INT32 unless
// dtype says otherwise; the diagonal is an integer scalar, known only at run time if need be.
Result<TypePtr> DeduceTri(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  const auto* diagonal = args[0]->type()->As<ScalarType>();
  if (!diagonal || !IsInteger(diagonal->dtype()))
    return TypeError(fmt::format("the diagonal of pl.tile.tri must be an integer scalar, got {}",
                                 args[0]->type()->str()),
                     span);
  auto shape = StaticInts(args[1], "the shape of pl.tile.tri", span);
  if (!shape) return pypto::unexpected(shape.error());
  if (shape->size() != 2 || (*shape)[0] <= 0 || (*shape)[1] <= 0)
    return TypeError(fmt::format("pl.tile.tri makes a 2-D tile [rows, cols], got {}", ShapeStr(*shape)), span);
  const DataType dtype = FindAttr<DataType>(kwargs, "dtype").value_or(DataType::INT32);
  if (!IsVectorWordDtype(dtype))
    return TypeError(fmt::format("pl.tile.tri makes 8-, 16- or 32-bit integer, FP16, BF16 or FP32 tiles, not {}",
                                 DataTypeName(dtype)),
                     span);
  ValidShape valid;
  if (args.size() > 2) {
    const auto* extents = args[2]->As<TupleLiteral>();
    if (!extents) return TypeError("the valid_shape of pl.tile.tri must be a list of integers", span);
    auto checked = CheckValidShape(extents->elements(), *shape, "the valid_shape of pl.tile.tri", span);
    if (!checked) return pypto::unexpected(checked.error());
    valid = *checked;
  }
  return std::make_shared<TileType>(*shape, dtype, MemorySpace::Vec, std::nullopt, valid);
}

}  // namespace

void RegisterTileTriangleOps(OpRegistry& registry) {
  registry.Register(OpDef{.name = "tile.tri",
                          .description = "triangular mask tile: 1 where col <= row + diagonal (upper: col >= row + "
                                         "diagonal), 0 elsewhere (pto.ttri)",
                          .params = {Arg("diagonal"), Arg("shape"), OptionalArg("valid_shape"),
                                     OptionalAttr("dtype", OpAttrKind::DType), OptionalAttr("upper", OpAttrKind::Bool)},
                          .deduce_type = DeduceTri,
                          .affinity = CoreAffinity::Vector});
}

}  // namespace pypto::ir
