// tile.* element-wise ops: tile with tile, tile with scalar (the `*s` forms), three-operand sums, unary
// math, cast.
#include <fmt/format.h>

#include "op_checks.h"

namespace pypto::ir {
namespace {

using namespace ops;

// An element-wise result is valid where its (first) operand is: the op computes only that region.
TypePtr SameAs(const TileType& tile) {
  return std::make_shared<TileType>(tile.shape(), tile.dtype(), tile.memory_space(), std::nullopt,
                                    tile.valid_shape());
}

Result<TypePtr> DeduceBinary(const std::string& op, const std::vector<ExprPtr>& args, const Span& span) {
  auto lhs = ExpectTile(args[0], fmt::format("the left operand of {}", op), span);
  if (!lhs) return pypto::unexpected(lhs.error());
  auto rhs = ExpectTile(args[1], fmt::format("the right operand of {}", op), span);
  if (!rhs) return pypto::unexpected(rhs.error());
  if ((*lhs)->shape() != (*rhs)->shape() || (*lhs)->dtype() != (*rhs)->dtype()) {
    return TypeError(fmt::format("operands differ: {} and {}", (*lhs)->str(), (*rhs)->str()), span);
  }
  return SameAs(**lhs);
}

// PTOAS's high-precision division is defined for floating-point tiles only.
Result<TypePtr> CheckHighPrecision(const std::string& op, const Call::Kwargs& kwargs, TypePtr type, const Span& span) {
  const auto* tile = type->As<TileType>();
  if (FindAttr<bool>(kwargs, "high_precision").value_or(false) && !IsFloat(tile->dtype()))
    return TypeError(fmt::format("{}(high_precision=True) needs a floating-point tile, got {}", op,
                                 DataTypeName(tile->dtype())),
                     span);
  return type;
}

// A scalar operand adopts the tile's dtype (a literal 2.0 scales an FP16 tile as FP16).
Result<TypePtr> DeduceWithScalar(const std::string& op, const std::vector<ExprPtr>& args, const Span& span) {
  auto lhs = ExpectTile(args[0], fmt::format("the tile operand of {}", op), span);
  if (!lhs) return pypto::unexpected(lhs.error());
  auto rhs = ExpectNumericScalar(args[1], fmt::format("the scalar operand of {}", op), span);
  if (!rhs) return pypto::unexpected(rhs.error());
  if (IsFloat((*rhs)->dtype()) && !IsFloat((*lhs)->dtype()) && !IsIntegralConstant(args[1])) {
    return TypeError(fmt::format("{} combines an integer {} tile with a floating-point scalar", op,
                                 DataTypeName((*lhs)->dtype())),
                     span, "cast the tile to a floating-point dtype first");
  }
  return SameAs(**lhs);
}

// The fused three-operand sums (TADDC, TSUBC, TADDSC, TSUBSC): a first operand combined with a tile
// (or, for the `sc` forms, a scalar), plus a third tile. Every tile has the first one's shape and dtype,
// as tile.add's two do.
Result<TypePtr> DeduceThreeOperand(const std::string& op, bool scalar_middle, const std::vector<ExprPtr>& args,
                                   const Span& span) {
  auto type = scalar_middle ? DeduceWithScalar(op, args, span) : DeduceBinary(op, args, span);
  if (!type) return type;
  const auto* lhs = args[0]->type()->As<TileType>();
  auto third = ExpectTile(args[2], fmt::format("the third operand of {}", op), span);
  if (!third) return pypto::unexpected(third.error());
  if ((*third)->shape() != lhs->shape() || (*third)->dtype() != lhs->dtype())
    return TypeError(fmt::format("the third operand of {} differs from the first: {} and {}", op, (*third)->str(),
                                 lhs->str()),
                     span);
  return type;
}

// Transcendental and root functions exist only for floating-point tiles.
bool FloatOnly(const std::string& op) { return op != "relu" && op != "abs" && op != "neg"; }

// The PTO sine and cosine (TSIN, TCOS) are defined for FP32 only.
bool Fp32Only(const std::string& op) { return op == "sin" || op == "cos"; }

Result<TypePtr> DeduceUnary(const std::string& op, const std::vector<ExprPtr>& args, const Span& span) {
  auto tile = ExpectTile(args[0], fmt::format("the operand of tile.{}", op), span);
  if (!tile) return pypto::unexpected(tile.error());
  if (Fp32Only(op) && (*tile)->dtype() != DataType::FP32)
    return TypeError(fmt::format("tile.{} needs an FP32 tile, got {}", op, DataTypeName((*tile)->dtype())), span,
                     "cast the tile to pl.FP32 first");
  if (FloatOnly(op))
    if (auto ok = CheckFloatDtype((*tile)->dtype(), "tile." + op, span); !ok) return pypto::unexpected(ok.error());
  if (args.size() > 1) {
    auto tmp = ExpectTile(args[1], fmt::format("the scratch tile of tile.{}", op), span);
    if (!tmp) return pypto::unexpected(tmp.error());
  }
  return SameAs(**tile);
}

// Leaky ReLU, x > 0 ? x : slope * x, scales by a scalar slope and exists for floating-point tiles.
Result<TypePtr> DeduceLeakyRelu(const std::vector<ExprPtr>& args, const Span& span) {
  auto tile = ExpectTile(args[0], "the operand of tile.lrelu", span);
  if (!tile) return pypto::unexpected(tile.error());
  if (auto ok = CheckFloatDtype((*tile)->dtype(), "tile.lrelu", span); !ok) return pypto::unexpected(ok.error());
  auto slope = ExpectNumericScalar(args[1], "the slope of tile.lrelu", span);
  if (!slope) return pypto::unexpected(slope.error());
  return SameAs(**tile);
}

// Parametric ReLU, x > 0 ? x : slope * x with a slope per element (TPRELU), for FP16 and FP32 tiles.
// The slope tile matches the source in shape, dtype and valid region; the scratch tile is the
// instruction's (its size rules differ by target and are the backend's to check).
Result<TypePtr> DeducePrelu(const std::vector<ExprPtr>& args, const Span& span) {
  auto tile = ExpectTile(args[0], "the operand of tile.prelu", span);
  if (!tile) return pypto::unexpected(tile.error());
  auto slope = ExpectTile(args[1], "the slope of tile.prelu", span);
  if (!slope) return pypto::unexpected(slope.error());
  auto tmp = ExpectTile(args[2], "the scratch tile of tile.prelu", span);
  if (!tmp) return pypto::unexpected(tmp.error());
  const DataType dtype = (*tile)->dtype();
  if (dtype != DataType::FP16 && dtype != DataType::FP32)
    return TypeError(fmt::format("tile.prelu needs an FP16 or FP32 tile, got {}", DataTypeName(dtype)), span);
  if ((*slope)->shape() != (*tile)->shape() || (*slope)->dtype() != dtype ||
      StaticValidExtents(**slope) != StaticValidExtents(**tile))
    return TypeError(fmt::format("the slope of tile.prelu must match its operand in shape, dtype and valid region, "
                                 "got {} and {}",
                                 (*slope)->str(), (*tile)->str()),
                     span);
  return SameAs(**tile);
}

// Bitwise NOT: the PTO instruction (TNOT) is defined for 16-bit integers only.
Result<TypePtr> DeduceNot(const std::vector<ExprPtr>& args, const Span& span) {
  auto tile = ExpectTile(args[0], "the operand of tile.not", span);
  if (!tile) return pypto::unexpected(tile.error());
  const DataType dtype = (*tile)->dtype();
  if (dtype != DataType::INT16 && dtype != DataType::UINT16)
    return TypeError(fmt::format("tile.not needs an INT16 or UINT16 tile, got {}", DataTypeName(dtype)), span);
  return SameAs(**tile);
}

const char* const kCastModes[] = {"none", "rint", "round", "floor", "ceil", "trunc", "odd"};

Result<TypePtr> DeduceCast(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  auto tile = ExpectTile(args[0], "the operand of tile.cast", span);
  if (!tile) return pypto::unexpected(tile.error());
  if (auto mode = FindAttr<std::string>(kwargs, "mode")) {
    bool known = false;
    for (const char* name : kCastModes) known = known || *mode == name;
    if (!known)
      return TypeError(fmt::format("unknown cast mode \"{}\"", *mode), span,
                       "modes: none, rint, round, floor, ceil, trunc, odd");
  }
  const DataType target = *FindAttr<DataType>(kwargs, "target_type");
  return std::make_shared<TileType>((*tile)->shape(), target, (*tile)->memory_space(), std::nullopt,
                                    (*tile)->valid_shape());
}

OpDef Binary(const std::string& name, const std::string& description, std::vector<OpParam> attrs = {},
             bool inplace_safe = true) {
  const std::string full = "tile." + name;
  std::vector<OpParam> params = {Arg("lhs"), Arg("rhs")};
  params.insert(params.end(), attrs.begin(), attrs.end());
  return OpDef{.name = full,
               .description = description,
               .params = std::move(params),
               .deduce_type = [full](const auto& args, const auto& kwargs, const Span& span) -> Result<TypePtr> {
                 auto type = DeduceBinary(full, args, span);
                 if (!type) return type;
                 return CheckHighPrecision(full, kwargs, *type, span);
               },
               .inplace_safe = inplace_safe};
}

OpDef WithScalar(const std::string& name, const std::string& description, bool inplace_safe = true) {
  const std::string full = "tile." + name;
  return OpDef{.name = full,
               .description = description,
               .params = {Arg("lhs"), Arg("rhs")},
               .deduce_type = [full](const auto& args, const auto&, const Span& span) {
                 return DeduceWithScalar(full, args, span);
               },
               .inplace_safe = inplace_safe};
}

// Not in-place: the instructions run as two steps (the first two operands into the result, then the
// third added to it), so a result sharing the third operand's buffer would lose it before it is read.
OpDef ThreeOperand(const std::string& name, const std::string& description, bool scalar_middle) {
  const std::string full = "tile." + name;
  return OpDef{.name = full,
               .description = description,
               .params = {Arg("lhs"), Arg("rhs"), Arg("rhs2")},
               .deduce_type = [full, scalar_middle](const auto& args, const auto&, const Span& span) {
                 return DeduceThreeOperand(full, scalar_middle, args, span);
               }};
}

OpDef Unary(const std::string& name, const std::string& description, bool takes_tmp = false,
            std::vector<OpParam> attrs = {}) {
  std::vector<OpParam> params = {Arg("tile")};
  if (takes_tmp) params.push_back(OptionalArg("tmp"));
  params.insert(params.end(), attrs.begin(), attrs.end());
  return OpDef{.name = "tile." + name,
               .description = description,
               .params = std::move(params),
               .deduce_type = [name](const auto& args, const auto&, const Span& span) {
                 return DeduceUnary(name, args, span);
               },
               .inplace_safe = true};
}

}  // namespace

void RegisterTileElementwiseOps(OpRegistry& registry) {
  registry.Register(Binary("add", "element-wise sum of two tiles"));
  registry.Register(Binary("sub", "element-wise difference of two tiles"));
  registry.Register(Binary("mul", "element-wise product of two tiles"));
  // high_precision selects PTOAS's exact division and logarithm (TDIV, TLOG); the simulator computes
  // both exactly in FP32 either way.
  registry.Register(Binary("div", "element-wise quotient of two tiles",
                           {OptionalAttr("high_precision", OpAttrKind::Bool)}));
  registry.Register(Binary("maximum", "element-wise maximum of two tiles"));
  registry.Register(Binary("minimum", "element-wise minimum of two tiles"));
  // The remainder's instructions (TFMOD, TFMODS) write the quotient into the result before they read
  // the dividend a last time, so the result must not reuse an operand's buffer.
  registry.Register(Binary("fmod", "element-wise remainder of two tiles, truncated as C's fmod and torch.fmod", {},
                           /*inplace_safe=*/false));

  registry.Register(WithScalar("adds", "a tile plus a scalar"));
  registry.Register(WithScalar("subs", "a tile minus a scalar"));
  registry.Register(WithScalar("muls", "a tile times a scalar"));
  registry.Register(WithScalar("divs", "a tile divided by a scalar"));
  registry.Register(WithScalar("maximums", "element-wise maximum of a tile and a scalar"));
  registry.Register(WithScalar("minimums", "element-wise minimum of a tile and a scalar"));
  registry.Register(WithScalar("fmods", "element-wise remainder of a tile divided by a scalar (as fmod)",
                               /*inplace_safe=*/false));

  // The subtracting forms add their third operand, as the PTO instructions do (TSUBC: a - b + c).
  registry.Register(ThreeOperand("addc", "element-wise lhs + rhs + rhs2 of three tiles", false));
  registry.Register(ThreeOperand("subc", "element-wise lhs - rhs + rhs2 of three tiles", false));
  registry.Register(ThreeOperand("addsc", "element-wise lhs + scalar + rhs2 of two tiles and a scalar", true));
  registry.Register(ThreeOperand("subsc", "element-wise lhs - scalar + rhs2 of two tiles and a scalar", true));

  registry.Register(Unary("exp", "e to the power of each element"));
  registry.Register(Unary("log", "natural logarithm of each element", /*takes_tmp=*/false,
                          {OptionalAttr("high_precision", OpAttrKind::Bool)}));
  registry.Register(Unary("sqrt", "square root of each element"));
  registry.Register(Unary("rsqrt", "1 / sqrt(x) of each element", /*takes_tmp=*/true));
  registry.Register(Unary("recip", "1 / x of each element"));
  registry.Register(Unary("relu", "max(0, x) of each element"));
  registry.Register(Unary("abs", "absolute value of each element"));
  registry.Register(Unary("neg", "negation of each element"));
  registry.Register(Unary("sin", "sine of each element (radians)"));
  registry.Register(Unary("cos", "cosine of each element (radians)"));

  registry.Register(OpDef{.name = "tile.lrelu",
                          .description = "leaky ReLU of each element: x > 0 ? x : slope * x",
                          .params = {Arg("tile"), Arg("slope")},
                          .deduce_type = [](const auto& args, const auto&,
                                            const Span& span) { return DeduceLeakyRelu(args, span); },
                          .inplace_safe = true});
  // Not in-place: TPRELU reads the source and the slope while it writes the result (A5 forbids it).
  registry.Register(OpDef{.name = "tile.prelu",
                          .description = "parametric ReLU of each element: x > 0 ? x : slope * x, a slope per element",
                          .params = {Arg("tile"), Arg("slope"), Arg("tmp")},
                          .deduce_type = [](const auto& args, const auto&,
                                            const Span& span) { return DeducePrelu(args, span); }});
  registry.Register(OpDef{.name = "tile.not",
                          .description = "bitwise NOT of each element of an integer tile",
                          .params = {Arg("tile")},
                          .deduce_type = [](const auto& args, const auto&,
                                            const Span& span) { return DeduceNot(args, span); },
                          .inplace_safe = true});

  // In place like upstream's: a same-width or narrowing conversion reads each element before it
  // writes over it (AllocateMemoryAddr never puts a widening one over its operand).
  registry.Register(OpDef{.name = "tile.cast",
                          .description = "convert each element to another dtype with a rounding mode",
                          .params = {Arg("tile"), Attr("target_type", OpAttrKind::DType),
                                     OptionalAttr("mode", OpAttrKind::String)},
                          .deduce_type = DeduceCast,
                          .inplace_safe = true});
}

}  // namespace pypto::ir
