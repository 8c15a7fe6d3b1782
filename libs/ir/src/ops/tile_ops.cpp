// tile.* ops: movement between global tensors and on-chip tiles, and element-wise arithmetic.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "pypto/ir/op_registry.h"

namespace pypto::ir {
namespace {

Result<Shape> StaticInts(const ExprPtr& expr, const char* what, const Span& span) {
  const auto* tuple = expr->As<TupleLiteral>();
  if (!tuple) return MakeError(DiagnosticKind::Type, fmt::format("{} must be a list of integers", what), span);
  Shape values;
  for (const auto& element : tuple->elements()) {
    auto value = AsConstInt(element);
    if (!value) return MakeError(DiagnosticKind::Type, fmt::format("{} must be integer literals", what), span);
    values.push_back(*value);
  }
  return values;
}

// Offsets may be computed at run time (loop variables); unknown entries are nullopt.
using Offsets = std::vector<std::optional<int64_t>>;

Result<Offsets> ScalarOffsets(const ExprPtr& expr, const char* what, const Span& span) {
  const auto* tuple = expr->As<TupleLiteral>();
  if (!tuple) return MakeError(DiagnosticKind::Type, fmt::format("{} must be a list of integers", what), span);
  Offsets offsets;
  for (const auto& element : tuple->elements()) {
    const auto* scalar = element->type()->As<ScalarType>();
    if (!scalar || !IsInteger(scalar->dtype()))
      return MakeError(DiagnosticKind::Type, fmt::format("{} must be integers, got {}", what, element->type()->str()),
                       span);
    offsets.push_back(AsConstInt(element));
  }
  return offsets;
}

std::string OffsetsStr(const Offsets& offsets) {
  std::vector<std::string> parts;
  for (const auto& offset : offsets) parts.push_back(offset ? std::to_string(*offset) : "?");
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

Result<const TensorType*> ExpectTensor(const ExprPtr& expr, const char* what, const Span& span) {
  if (const auto* tensor = expr->type()->As<TensorType>()) return tensor;
  return MakeError(DiagnosticKind::Type, fmt::format("{} must be a tensor, got {}", what, expr->type()->str()), span);
}

Result<const TileType*> ExpectTile(const ExprPtr& expr, const char* what, const Span& span) {
  if (const auto* tile = expr->type()->As<TileType>()) return tile;
  return MakeError(DiagnosticKind::Type, fmt::format("{} must be a tile, got {}", what, expr->type()->str()), span);
}

// The region [offsets, offsets + shape) must lie inside the tensor; offsets known only at run
// time are checked there (the simulator refuses out-of-bounds accesses).
Result<bool> CheckRegion(const TensorType& tensor, const Offsets& offsets, const Shape& shape, const Span& span) {
  if (offsets.size() != tensor.shape().size() || shape.size() != tensor.shape().size()) {
    return MakeError(DiagnosticKind::Type,
                     fmt::format("region rank does not match the tensor: offsets {}, shape [{}], tensor {}",
                                 OffsetsStr(offsets), fmt::join(shape, ", "), tensor.str()),
                     span);
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t offset = offsets[d].value_or(0);
    if (offset < 0 || shape[d] <= 0 || offset + shape[d] > tensor.shape()[d]) {
      return MakeError(DiagnosticKind::Type,
                       fmt::format("region at offsets {} with shape [{}] is outside tensor {} (dimension {})",
                                   OffsetsStr(offsets), fmt::join(shape, ", "), tensor.str(), d),
                       span);
    }
  }
  return true;
}

Result<TypePtr> DeduceLoad(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  auto tensor = ExpectTensor(args[0], "the source of pl.load", span);
  if (!tensor) return pypto::unexpected(tensor.error());
  auto offsets = ScalarOffsets(args[1], "load offsets", span);
  if (!offsets) return pypto::unexpected(offsets.error());
  auto shape = StaticInts(args[2], "load shapes", span);
  if (!shape) return pypto::unexpected(shape.error());
  if (auto ok = CheckRegion(**tensor, *offsets, *shape, span); !ok) return pypto::unexpected(ok.error());
  return std::make_shared<TileType>(*shape, (*tensor)->dtype(), MemorySpace::Vec);
}

Result<TypePtr> DeduceStore(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  auto tile = ExpectTile(args[0], "the value of pl.store", span);
  if (!tile) return pypto::unexpected(tile.error());
  auto offsets = ScalarOffsets(args[1], "store offsets", span);
  if (!offsets) return pypto::unexpected(offsets.error());
  auto tensor = ExpectTensor(args[2], "the destination of pl.store", span);
  if (!tensor) return pypto::unexpected(tensor.error());
  if ((*tile)->dtype() != (*tensor)->dtype()) {
    return MakeError(DiagnosticKind::Type,
                     fmt::format("cannot store a {} tile into a {} tensor", DataTypeName((*tile)->dtype()),
                                 DataTypeName((*tensor)->dtype())),
                     span);
  }
  if (auto ok = CheckRegion(**tensor, *offsets, (*tile)->shape(), span); !ok) return pypto::unexpected(ok.error());
  return args[2]->type();
}

Result<TypePtr> DeduceElementwise(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  auto lhs = ExpectTile(args[0], "the left operand", span);
  if (!lhs) return pypto::unexpected(lhs.error());
  auto rhs = ExpectTile(args[1], "the right operand", span);
  if (!rhs) return pypto::unexpected(rhs.error());
  if ((*lhs)->shape() != (*rhs)->shape() || (*lhs)->dtype() != (*rhs)->dtype()) {
    return MakeError(DiagnosticKind::Type,
                     fmt::format("operands differ: {} and {}", (*lhs)->str(), (*rhs)->str()), span);
  }
  return std::make_shared<TileType>((*lhs)->shape(), (*lhs)->dtype(), (*lhs)->memory_space());
}

OpDef Elementwise(std::string name, std::string description) {
  return OpDef{.name = std::move(name),
               .description = std::move(description),
               .arg_names = {"lhs", "rhs"},
               .deduce_type = DeduceElementwise,
               .affinity = CoreAffinity::Vector,
               .inplace_safe = true};
}

}  // namespace

void RegisterTileOps(OpRegistry& registry) {
  registry.Register(OpDef{.name = "tile.load",
                          .description = "copy a region of a global tensor into a Vec tile",
                          .arg_names = {"tensor", "offsets", "shapes"},
                          .deduce_type = DeduceLoad,
                          .affinity = CoreAffinity::Vector,
                          .reads_tensor_arg = 0});
  registry.Register(OpDef{.name = "tile.store",
                          .description = "copy a tile into a region of a global tensor",
                          .arg_names = {"tile", "offsets", "output_tensor"},
                          .deduce_type = DeduceStore,
                          .affinity = CoreAffinity::Vector,
                          .writes_arg = 2});
  registry.Register(Elementwise("tile.add", "element-wise sum of two tiles"));
  registry.Register(Elementwise("tile.sub", "element-wise difference of two tiles"));
  registry.Register(Elementwise("tile.mul", "element-wise product of two tiles"));
  registry.Register(Elementwise("tile.div", "element-wise quotient of two tiles"));
}

}  // namespace pypto::ir
