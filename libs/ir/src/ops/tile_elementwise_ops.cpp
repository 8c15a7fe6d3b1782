// tile.* element-wise ops: tile with tile, tile with scalar (the `*s` forms), unary math, cast.
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

// A scalar operand adopts the tile's dtype (a literal 2.0 scales an FP16 tile as FP16).
Result<TypePtr> DeduceWithScalar(const std::string& op, const std::vector<ExprPtr>& args, const Span& span) {
  auto lhs = ExpectTile(args[0], fmt::format("the tile operand of {}", op), span);
  if (!lhs) return pypto::unexpected(lhs.error());
  auto rhs = ExpectNumericScalar(args[1], fmt::format("the scalar operand of {}", op), span);
  if (!rhs) return pypto::unexpected(rhs.error());
  if (IsFloat((*rhs)->dtype()) && !IsFloat((*lhs)->dtype())) {
    return TypeError(fmt::format("{} combines an integer {} tile with a floating-point scalar", op,
                                 DataTypeName((*lhs)->dtype())),
                     span, "cast the tile to a floating-point dtype first");
  }
  return SameAs(**lhs);
}

// Transcendental and root functions exist only for floating-point tiles.
bool FloatOnly(const std::string& op) { return op != "relu" && op != "abs" && op != "neg"; }

Result<TypePtr> DeduceUnary(const std::string& op, const std::vector<ExprPtr>& args, const Span& span) {
  auto tile = ExpectTile(args[0], fmt::format("the operand of tile.{}", op), span);
  if (!tile) return pypto::unexpected(tile.error());
  if (FloatOnly(op))
    if (auto ok = CheckFloatDtype((*tile)->dtype(), "tile." + op, span); !ok) return pypto::unexpected(ok.error());
  if (args.size() > 1) {
    auto tmp = ExpectTile(args[1], fmt::format("the scratch tile of tile.{}", op), span);
    if (!tmp) return pypto::unexpected(tmp.error());
  }
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

OpDef Binary(const std::string& name, const std::string& description) {
  const std::string full = "tile." + name;
  return OpDef{.name = full,
               .description = description,
               .params = {Arg("lhs"), Arg("rhs")},
               .deduce_type = [full](const auto& args, const auto&, const Span& span) {
                 return DeduceBinary(full, args, span);
               },
               .inplace_safe = true};
}

OpDef WithScalar(const std::string& name, const std::string& description) {
  const std::string full = "tile." + name;
  return OpDef{.name = full,
               .description = description,
               .params = {Arg("lhs"), Arg("rhs")},
               .deduce_type = [full](const auto& args, const auto&, const Span& span) {
                 return DeduceWithScalar(full, args, span);
               },
               .inplace_safe = true};
}

OpDef Unary(const std::string& name, const std::string& description, bool takes_tmp = false) {
  std::vector<OpParam> params = {Arg("tile")};
  if (takes_tmp) params.push_back(OptionalArg("tmp"));
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
  registry.Register(Binary("div", "element-wise quotient of two tiles"));
  registry.Register(Binary("maximum", "element-wise maximum of two tiles"));
  registry.Register(Binary("minimum", "element-wise minimum of two tiles"));

  registry.Register(WithScalar("adds", "a tile plus a scalar"));
  registry.Register(WithScalar("subs", "a tile minus a scalar"));
  registry.Register(WithScalar("muls", "a tile times a scalar"));
  registry.Register(WithScalar("divs", "a tile divided by a scalar"));
  registry.Register(WithScalar("maximums", "element-wise maximum of a tile and a scalar"));
  registry.Register(WithScalar("minimums", "element-wise minimum of a tile and a scalar"));

  registry.Register(Unary("exp", "e to the power of each element"));
  registry.Register(Unary("log", "natural logarithm of each element"));
  registry.Register(Unary("sqrt", "square root of each element"));
  registry.Register(Unary("rsqrt", "1 / sqrt(x) of each element", /*takes_tmp=*/true));
  registry.Register(Unary("recip", "1 / x of each element"));
  registry.Register(Unary("relu", "max(0, x) of each element"));
  registry.Register(Unary("abs", "absolute value of each element"));
  registry.Register(Unary("neg", "negation of each element"));

  registry.Register(OpDef{.name = "tile.cast",
                          .description = "convert each element to another dtype with a rounding mode",
                          .params = {Arg("tile"), Attr("target_type", OpAttrKind::DType),
                                     OptionalAttr("mode", OpAttrKind::String)},
                          .deduce_type = DeduceCast});
}

}  // namespace pypto::ir
