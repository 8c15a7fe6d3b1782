// tile.* bitwise, shift and remainder ops: and / or / xor (TAND, TOR, TXOR), shl / shr (TSHL, TSHR),
// rem (TREM), each with a tile or a scalar right operand (the `*s` forms). The bitwise ops and the
// shifts take integer tiles; rem takes integer and floating-point tiles and rounds its quotient down,
// so the remainder has the divisor's sign (Python's %, torch.remainder), unlike tile.fmod.
//
// Both operands of a tile-tile op share one shape and dtype: each instruction is a template over one
// tile type (a shift's counts are elements of the shifted tile's type). xor, xors, rem and rems also
// take the scratch tile their A2/A3 instructions need, shaped and typed as the operand.
#include <fmt/format.h>

#include "op_checks.h"

namespace pypto::ir {
namespace {

using namespace ops;

TypePtr SameAs(const TileType& tile) {
  return std::make_shared<TileType>(tile.shape(), tile.dtype(), tile.memory_space(), std::nullopt,
                                    tile.valid_shape());
}

bool IsShift(const std::string& op) { return op.starts_with("tile.sh"); }
bool IsRemainder(const std::string& op) { return op.starts_with("tile.rem"); }

// The bitwise ops and the shifts are defined on integers only; rem on any number.
Result<bool> CheckOperandDtype(const std::string& op, DataType dtype, const Span& span) {
  if (IsInteger(dtype) || (IsRemainder(op) && IsFloat(dtype))) return true;
  return TypeError(fmt::format("{} needs an integer tile, got {}", op, DataTypeName(dtype)), span,
                   IsFloat(dtype) ? "bitwise ops and shifts read the bits of integers; cast the tile first" : "");
}

// The scratch tile of xor / xors / rem / rems: the instruction's working copy of the operand.
Result<bool> CheckScratch(const std::string& op, const TileType& operand, const ExprPtr& arg, const Span& span) {
  auto tmp = ExpectTile(arg, fmt::format("the scratch tile of {}", op), span);
  if (!tmp) return pypto::unexpected(tmp.error());
  if ((*tmp)->shape() != operand.shape() || (*tmp)->dtype() != operand.dtype())
    return TypeError(fmt::format("the scratch tile of {} must have its operand's shape and dtype, {} {}; got {}", op,
                                 ShapeStr(operand.shape()), DataTypeName(operand.dtype()), (*tmp)->str()),
                     span);
  return true;
}

Result<TypePtr> DeduceTiles(const std::string& op, bool takes_tmp, const std::vector<ExprPtr>& args,
                            const Span& span) {
  auto lhs = ExpectTile(args[0], fmt::format("the left operand of {}", op), span);
  if (!lhs) return pypto::unexpected(lhs.error());
  const std::string rhs_role = IsShift(op) ? "the shift counts of " + op : "the right operand of " + op;
  auto rhs = ExpectTile(args[1], rhs_role, span);
  if (!rhs) return pypto::unexpected(rhs.error());
  if (auto ok = CheckOperandDtype(op, (*lhs)->dtype(), span); !ok) return pypto::unexpected(ok.error());
  if ((*lhs)->dtype() != (*rhs)->dtype())
    return TypeError(fmt::format("{} combines tiles of one dtype, got {} and {}", op, DataTypeName((*lhs)->dtype()),
                                 DataTypeName((*rhs)->dtype())),
                     span, "cast one operand to the other's dtype");
  if ((*lhs)->shape() != (*rhs)->shape())
    return TypeError(fmt::format("{} combines tiles of one shape, got {} and {}", op, ShapeStr((*lhs)->shape()),
                                 ShapeStr((*rhs)->shape())),
                     span);
  if (takes_tmp)
    if (auto ok = CheckScratch(op, **lhs, args[2], span); !ok) return pypto::unexpected(ok.error());
  return SameAs(**lhs);
}

// A constant shift count outside [0, bits) shifts every bit out (or in); the instructions do not
// define it, so it is refused where it is known.
Result<bool> CheckShiftCount(const std::string& op, DataType dtype, const ExprPtr& count, const Span& span) {
  const auto value = AsConstInt(count);
  const int bits = DataTypeBits(dtype);
  if (!value || (*value >= 0 && *value < bits)) return true;
  return TypeError(fmt::format("{} shifts {} elements by 0 to {} bits, got {}", op, DataTypeName(dtype), bits - 1,
                               *value),
                   span);
}

Result<TypePtr> DeduceWithScalar(const std::string& op, bool takes_tmp, const std::vector<ExprPtr>& args,
                                 const Span& span) {
  auto tile = ExpectTile(args[0], fmt::format("the tile operand of {}", op), span);
  if (!tile) return pypto::unexpected(tile.error());
  auto scalar = ExpectNumericScalar(args[1], fmt::format("the scalar operand of {}", op), span);
  if (!scalar) return pypto::unexpected(scalar.error());
  const DataType dtype = (*tile)->dtype();
  if (auto ok = CheckOperandDtype(op, dtype, span); !ok) return pypto::unexpected(ok.error());
  // The scalar becomes an element of the tile's type. The bitwise and shift instructions take it as
  // an i32; rem's may be a float constant holding an integer, as fmods's.
  const bool integral = !IsFloat((*scalar)->dtype()) || (IsRemainder(op) && IsIntegralConstant(args[1]));
  if (!IsFloat(dtype) && !integral)
    return TypeError(
        fmt::format("{} combines an integer {} tile with a floating-point scalar", op, DataTypeName(dtype)), span,
        "pass an integer scalar");
  if (IsShift(op))
    if (auto ok = CheckShiftCount(op, dtype, args[1], span); !ok) return pypto::unexpected(ok.error());
  if (takes_tmp)
    if (auto ok = CheckScratch(op, **tile, args[2], span); !ok) return pypto::unexpected(ok.error());
  return SameAs(**tile);
}

// The ops whose instruction works through a scratch tile (A2/A3's TXOR, TXORS, TREM, TREMS).
bool TakesScratch(const std::string& name) { return name.starts_with("xor") || name.starts_with("rem"); }

// `tile.<name>`: of two tiles, or (`scalar_rhs`) of a tile and a scalar, with the scratch tile its
// instruction needs.
OpDef BitwiseOp(const std::string& name, const std::string& description, bool scalar_rhs) {
  const std::string full = "tile." + name;
  const bool takes_tmp = TakesScratch(name);
  std::vector<OpParam> params = {Arg("lhs"), Arg("rhs")};
  if (takes_tmp) params.push_back(Arg("tmp"));
  return OpDef{.name = full,
               .description = description,
               .params = std::move(params),
               .deduce_type =
                   [full, takes_tmp, scalar_rhs](const auto& args, const auto&, const Span& span) {
                     return scalar_rhs ? DeduceWithScalar(full, takes_tmp, args, span)
                                       : DeduceTiles(full, takes_tmp, args, span);
                   },
               // Upstream does not let the scratch-tile instructions write over an operand, and keeps
               // the scalar bitwise ops out of place (their A2/A3 forms stage the scalar in the
               // result) but the scalar shifts in place.
               .inplace_safe = scalar_rhs ? IsShift(full) : !takes_tmp};
}

OpDef WithTile(const std::string& name, const std::string& description) {
  return BitwiseOp(name, description, /*scalar_rhs=*/false);
}

OpDef WithScalar(const std::string& name, const std::string& description) {
  return BitwiseOp(name, description, /*scalar_rhs=*/true);
}

}  // namespace

void RegisterTileBitwiseOps(OpRegistry& registry) {
  registry.Register(WithTile("and", "bitwise AND of two integer tiles"));
  registry.Register(WithTile("or", "bitwise OR of two integer tiles"));
  registry.Register(WithTile("xor", "bitwise XOR of two integer tiles (with a scratch tile)"));
  registry.Register(WithTile("shl", "each element shifted left by the matching element of a count tile"));
  registry.Register(WithTile("shr", "each element shifted right (arithmetic for signed dtypes) by a count tile"));
  registry.Register(WithTile("rem", "element-wise remainder of two tiles, signed as the divisor (floor division)"));

  registry.Register(WithScalar("ands", "bitwise AND of an integer tile and a scalar"));
  registry.Register(WithScalar("ors", "bitwise OR of an integer tile and a scalar"));
  registry.Register(WithScalar("xors", "bitwise XOR of an integer tile and a scalar (with a scratch tile)"));
  registry.Register(WithScalar("shls", "each element shifted left by a scalar count"));
  registry.Register(WithScalar("shrs", "each element shifted right (arithmetic for signed dtypes) by a scalar count"));
  registry.Register(WithScalar("rems", "element-wise remainder of a tile divided by a scalar, signed as the divisor"));
}

}  // namespace pypto::ir
