// tile.* comparisons and the selection they drive. A comparison does not produce a tile of booleans
// but a packed predicate mask, as the PTO compare instructions (TCMP, TCMPS) write it: a UINT8 tile
// with one bit per compared element, element c of a row in bit c % 8 of the row's byte c / 8. Each
// mask row is padded to a multiple of 32 bytes, so an [M, N] comparison gives an
// [M, roundup(ceil(N / 8), 32)] mask; tile.sel (TSEL) reads such a mask to pick between two tiles,
// tile.sels (TSELS) to pick between a tile and a scalar.
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

// The mask must hold a predicate bit for every element of `tile`: as many rows, and rows of at least
// ceil(cols / 8) bytes (a mask of wider integers counts its bytes).
Result<bool> CheckMaskCovers(const MatrixTile& mask, const MatrixTile& tile, const std::string& op, const Span& span) {
  const DataType mask_dtype = mask->dtype();
  const int64_t row_bytes = mask.cols() * static_cast<int64_t>(DataTypeBytes(mask_dtype));
  if (IsInteger(mask_dtype) && mask.rows() >= tile.rows() && row_bytes >= MaskBytes(tile.cols())) return true;
  return TypeError(fmt::format("the mask of {} must hold a predicate bit for each of the {} x {} elements "
                               "(an integer tile of at least {} rows of {} bytes), got {}",
                               op, tile.rows(), tile.cols(), tile.rows(), MaskBytes(tile.cols()), mask->str()),
                   span, "a mask comes from pl.tile.cmp or pl.tile.cmps of a tile of this shape");
}

// dst = mask ? lhs : rhs.
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
  if (auto ok = CheckMaskCovers(*mask, *lhs, "tile.sel", span); !ok) return pypto::unexpected(ok.error());
  return std::make_shared<TileType>((*lhs)->shape(), (*lhs)->dtype(), (*lhs)->memory_space(), std::nullopt,
                                    (*lhs)->valid_shape());
}

// The element types TSELS selects: 8-, 16- and 32-bit integers, FP16 and FP32.
bool SelectsScalarOf(DataType dtype) {
  switch (dtype) {
    case DataType::INT8: case DataType::UINT8: case DataType::INT16: case DataType::UINT16:
    case DataType::INT32: case DataType::UINT32: case DataType::FP16: case DataType::FP32: return true;
    default: return false;
  }
}

// dst = mask ? src : scalar (TSELS). The scalar takes src's dtype, an unsigned src's constant keeping
// its bit pattern (0x8007 selects the UINT16 element 0x8007); an integer tile takes a floating-point
// constant only when it holds an integer (-3.0).
Result<TypePtr> DeduceSels(const std::vector<ExprPtr>& args, const Span& span) {
  auto mask = ExpectMatrixTile(args[0], "the mask of tile.sels", span);
  if (!mask) return pypto::unexpected(mask.error());
  auto src = ExpectMatrixTile(args[1], "the source of tile.sels", span);
  if (!src) return pypto::unexpected(src.error());
  auto tmp = ExpectTile(args[2], "the scratch tile of tile.sels", span);
  if (!tmp) return pypto::unexpected(tmp.error());
  auto scalar = ExpectNumericScalar(args[3], "the scalar of tile.sels", span);
  if (!scalar) return pypto::unexpected(scalar.error());
  const DataType dtype = (*src)->dtype();
  if (!SelectsScalarOf(dtype))
    return TypeError(fmt::format("tile.sels selects from 8-, 16- or 32-bit integer, FP16 or FP32 tiles, got {}",
                                 DataTypeName(dtype)),
                     span);
  if (IsFloat((*scalar)->dtype()) && !IsFloat(dtype) && !IsIntegralConstant(args[3]))
    return TypeError(fmt::format("tile.sels selects between an integer {} tile and a floating-point scalar",
                                 DataTypeName(dtype)),
                     span, "give an integer scalar");
  if (auto ok = CheckMaskCovers(*mask, *src, "tile.sels", span); !ok) return pypto::unexpected(ok.error());
  return std::make_shared<TileType>((*src)->shape(), dtype, (*src)->memory_space(), std::nullopt,
                                    (*src)->valid_shape());
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
  registry.Register(OpDef{.name = "tile.sels",
                          .description = "src where the packed predicate mask has its bit set, a scalar elsewhere",
                          .params = {Arg("mask"), Arg("src"), Arg("tmp"), Arg("scalar")},
                          .deduce_type = [](const auto& args, const auto&, const Span& span) {
                            return DeduceSels(args, span);
                          }});
}

}  // namespace pypto::ir
