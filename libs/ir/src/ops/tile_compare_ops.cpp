// tile.* comparisons and the selection they drive. A comparison does not produce a tile of booleans
// but a packed predicate mask, as the PTO compare instructions (TCMP, TCMPS) write it: a UINT8 tile
// with one bit per compared element, element c of a row in bit c % 8 of the row's byte c / 8. Each
// mask row is padded to a multiple of 32 bytes, so an [M, N] comparison gives an
// [M, roundup(ceil(N / 8), 32)] mask; tile.sel (TSEL) reads such a mask to pick between two tiles.
#include <fmt/format.h>

#include "op_checks.h"

namespace pypto::ir {
namespace {

using namespace ops;

// cmp_type, in upstream's numbering: 0 EQ, 1 NE, 2 LT, 3 LE, 4 GT, 5 GE.
constexpr int64_t kCmpTypes = 6;

// A mask row holds 8 predicates per byte and is padded to a 32-byte block.
constexpr int64_t kPredicatesPerByte = 8;
constexpr int64_t kMaskRowAlignment = 32;

int64_t MaskBytes(int64_t cols) { return (cols + kPredicatesPerByte - 1) / kPredicatesPerByte; }

ExprPtr IndexConst(int64_t value, const Span& span) { return std::make_shared<ConstInt>(value, DataType::INDEX, span); }

// ceil(cols / 8) for a valid extent known only at run time.
ExprPtr MaskBytesExpr(const ExprPtr& cols, const Span& span) {
  if (auto known = AsConstInt(cols)) return IndexConst(MaskBytes(*known), span);
  auto padded = std::make_shared<BinaryExpr>(BinaryOp::Add, cols, IndexConst(kPredicatesPerByte - 1, span),
                                             cols->type(), span);
  return std::make_shared<BinaryExpr>(BinaryOp::FloorDiv, padded, IndexConst(kPredicatesPerByte, span), cols->type(),
                                      span);
}

Result<bool> CheckCmpType(const std::string& op, const Call::Kwargs& kwargs, const Span& span) {
  const int64_t cmp_type = FindAttr<int64_t>(kwargs, "cmp_type").value_or(0);
  if (cmp_type < 0 || cmp_type >= kCmpTypes)
    return TypeError(fmt::format("{} cmp_type={} is not a comparison", op, cmp_type), span,
                     "cmp_type is 0 (EQ), 1 (NE), 2 (LT), 3 (LE), 4 (GT) or 5 (GE)");
  return true;
}

// The packed mask of comparing `tile` element by element; valid where the tile is.
TypePtr MaskOf(const MatrixTile& tile, const Span& span) {
  const int64_t mask_cols = (MaskBytes(tile.cols()) + kMaskRowAlignment - 1) / kMaskRowAlignment * kMaskRowAlignment;
  ValidShape valid;
  if (tile->has_partial_valid_shape())
    valid = tile.ValidReshaped(tile.valid_rows(), MaskBytesExpr(tile.valid_cols(), span), span);
  return std::make_shared<TileType>(tile.Reshaped(tile.rows(), mask_cols), DataType::UINT8, tile->memory_space(),
                                    std::nullopt, std::move(valid));
}

Result<TypePtr> DeduceCmp(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  auto lhs = ExpectMatrixTile(args[0], "the left operand of tile.cmp", span);
  if (!lhs) return pypto::unexpected(lhs.error());
  auto rhs = ExpectTile(args[1], "the right operand of tile.cmp", span);
  if (!rhs) return pypto::unexpected(rhs.error());
  if ((*lhs)->shape() != (*rhs)->shape() || (*lhs)->dtype() != (*rhs)->dtype())
    return TypeError(fmt::format("tile.cmp compares tiles of one shape and dtype, got {} and {}", (*lhs)->str(),
                                 (*rhs)->str()),
                     span);
  if (auto ok = CheckCmpType("tile.cmp", kwargs, span); !ok) return pypto::unexpected(ok.error());
  return MaskOf(*lhs, span);
}

Result<TypePtr> DeduceCmps(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  auto lhs = ExpectMatrixTile(args[0], "the tile operand of tile.cmps", span);
  if (!lhs) return pypto::unexpected(lhs.error());
  auto rhs = ExpectNumericScalar(args[1], "the scalar operand of tile.cmps", span);
  if (!rhs) return pypto::unexpected(rhs.error());
  if (IsFloat((*rhs)->dtype()) && !IsFloat((*lhs)->dtype()))
    return TypeError(fmt::format("tile.cmps compares an integer {} tile with a floating-point scalar",
                                 DataTypeName((*lhs)->dtype())),
                     span, "cast the tile to a floating-point dtype first");
  if (auto ok = CheckCmpType("tile.cmps", kwargs, span); !ok) return pypto::unexpected(ok.error());
  return MaskOf(*lhs, span);
}

// dst = mask ? lhs : rhs. The mask must hold a predicate bit for every element of lhs: as many rows,
// and rows of at least ceil(cols / 8) bytes (a mask of wider integers counts its bytes).
Result<TypePtr> DeduceSel(const std::vector<ExprPtr>& args, const Span& span) {
  auto mask = ExpectMatrixTile(args[0], "the mask of tile.sel", span);
  if (!mask) return pypto::unexpected(mask.error());
  auto lhs = ExpectMatrixTile(args[1], "the left operand of tile.sel", span);
  if (!lhs) return pypto::unexpected(lhs.error());
  auto rhs = ExpectTile(args[2], "the right operand of tile.sel", span);
  if (!rhs) return pypto::unexpected(rhs.error());
  auto tmp = ExpectTile(args[3], "the scratch tile of tile.sel", span);
  if (!tmp) return pypto::unexpected(tmp.error());
  if ((*lhs)->shape() != (*rhs)->shape() || (*lhs)->dtype() != (*rhs)->dtype())
    return TypeError(fmt::format("tile.sel picks between tiles of one shape and dtype, got {} and {}", (*lhs)->str(),
                                 (*rhs)->str()),
                     span);
  const DataType mask_dtype = (*mask)->dtype();
  const int64_t row_bytes = mask->cols() * static_cast<int64_t>(DataTypeBytes(mask_dtype));
  if (!IsInteger(mask_dtype) || mask->rows() < lhs->rows() || row_bytes < MaskBytes(lhs->cols()))
    return TypeError(fmt::format("the mask of tile.sel must hold a predicate bit for each of the {} x {} elements "
                                 "(an integer tile of at least {} rows of {} bytes), got {}",
                                 lhs->rows(), lhs->cols(), lhs->rows(), MaskBytes(lhs->cols()), (*mask)->str()),
                     span, "a mask comes from pl.tile.cmp or pl.tile.cmps of a tile of this shape");
  return std::make_shared<TileType>((*lhs)->shape(), (*lhs)->dtype(), (*lhs)->memory_space(), std::nullopt,
                                    (*lhs)->valid_shape());
}

}  // namespace

void RegisterTileCompareOps(OpRegistry& registry) {
  registry.Register(OpDef{.name = "tile.cmp",
                          .description = "packed UINT8 predicate mask of comparing two tiles element by element "
                                         "(cmp_type: 0 EQ, 1 NE, 2 LT, 3 LE, 4 GT, 5 GE)",
                          .params = {Arg("lhs"), Arg("rhs"), OptionalAttr("cmp_type", OpAttrKind::Int)},
                          .deduce_type = DeduceCmp});
  registry.Register(OpDef{.name = "tile.cmps",
                          .description = "packed UINT8 predicate mask of comparing each element of a tile with a "
                                         "scalar (cmp_type as tile.cmp)",
                          .params = {Arg("lhs"), Arg("rhs"), OptionalAttr("cmp_type", OpAttrKind::Int)},
                          .deduce_type = DeduceCmps});
  // Not in-place: TSEL reads the mask and the scratch tile while it writes the result.
  registry.Register(OpDef{.name = "tile.sel",
                          .description = "lhs where the packed predicate mask has its bit set, rhs elsewhere",
                          .params = {Arg("mask"), Arg("lhs"), Arg("rhs"), Arg("tmp")},
                          .deduce_type = [](const auto& args, const auto&, const Span& span) {
                            return DeduceSel(args, span);
                          }});
}

}  // namespace pypto::ir
