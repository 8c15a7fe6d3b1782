#include "op_checks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "pypto/ir/dynamic_extent.h"

namespace pypto::ir::ops {

std::string ShapeStr(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

Result<Shape> StaticInts(const ExprPtr& expr, const std::string& what, const Span& span) {
  const auto* tuple = expr->As<TupleLiteral>();
  if (!tuple) return TypeError(fmt::format("{} must be a list of integers", what), span);
  Shape values;
  for (const auto& element : tuple->elements()) {
    auto value = AsConstInt(element);
    if (!value) return TypeError(fmt::format("{} must be integer literals", what), span);
    values.push_back(*value);
  }
  return values;
}

Result<Offsets> ScalarOffsets(const ExprPtr& expr, const std::string& what, const Span& span) {
  const auto* tuple = expr->As<TupleLiteral>();
  if (!tuple) return TypeError(fmt::format("{} must be a list of integers", what), span);
  Offsets offsets;
  for (const auto& element : tuple->elements()) {
    const auto* scalar = element->type()->As<ScalarType>();
    if (!scalar || !IsInteger(scalar->dtype()))
      return TypeError(fmt::format("{} must be integers, got {}", what, element->type()->str()), span);
    offsets.push_back(AsConstInt(element));
  }
  return offsets;
}

std::string OffsetsStr(const Offsets& offsets) {
  std::vector<std::string> parts;
  for (const auto& offset : offsets) parts.push_back(offset ? std::to_string(*offset) : "?");
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

Result<const TensorType*> ExpectTensor(const ExprPtr& expr, const std::string& what, const Span& span) {
  if (const auto* tensor = expr->type()->As<TensorType>()) return tensor;
  return TypeError(fmt::format("{} must be a tensor, got {}", what, expr->type()->str()), span);
}

Result<const TileType*> ExpectTile(const ExprPtr& expr, const std::string& what, const Span& span) {
  if (const auto* tile = expr->type()->As<TileType>()) return tile;
  return TypeError(fmt::format("{} must be a tile, got {}", what, expr->type()->str()), span);
}

Shape MatrixTile::Reshaped(int64_t rows, int64_t cols) const {
  Shape shape(leading(), 1);
  shape.push_back(rows);
  shape.push_back(cols);
  return shape;
}

ExprPtr MatrixTile::valid_rows() const {
  return tile_->has_partial_valid_shape() ? tile_->valid_shape()[leading()] : nullptr;
}

ExprPtr MatrixTile::valid_cols() const {
  return tile_->has_partial_valid_shape() ? tile_->valid_shape()[leading() + 1] : nullptr;
}

ValidShape MatrixTile::ValidReshaped(ExprPtr rows, ExprPtr cols, const Span& span) const {
  ValidShape valid;
  for (size_t d = 0; d < leading(); ++d) {
    valid.push_back(tile_->has_partial_valid_shape() ? tile_->valid_shape()[d]
                                                     : std::make_shared<ConstInt>(1, DataType::INDEX, span));
  }
  valid.push_back(std::move(rows));
  valid.push_back(std::move(cols));
  return valid;
}

Result<MatrixTile> ExpectMatrixTile(const ExprPtr& expr, const std::string& what, const Span& span) {
  auto tile = ExpectTile(expr, what, span);
  if (!tile) return pypto::unexpected(tile.error());
  const Shape& shape = (*tile)->shape();
  if (shape.size() < 2)
    return TypeError(fmt::format("{} must be a 2-D tile, got {}", what, (*tile)->str()), span);
  for (size_t d = 0; d + 2 < shape.size(); ++d) {
    if (shape[d] != 1) {
      return TypeError(fmt::format("{} must be a matrix, but dimension {} of {} is {}: a tile of rank {} is read as "
                                   "the matrix of its last two dimensions, so the others must be 1",
                                   what, d, (*tile)->str(), shape[d], shape.size()),
                       span, "this op does not take batches of matrices yet; loop over the leading dimension");
    }
  }
  return MatrixTile(*tile);
}

Result<const ScalarType*> ExpectNumericScalar(const ExprPtr& expr, const std::string& what, const Span& span) {
  const auto* scalar = expr->type()->As<ScalarType>();
  if (scalar && (IsFloat(scalar->dtype()) || IsInteger(scalar->dtype()))) return scalar;
  return TypeError(fmt::format("{} must be a number, got {}", what, expr->type()->str()), span);
}

Result<bool> CheckRegion(const TensorType& tensor, const Offsets& offsets, const Shape& shape, const Span& span) {
  if (offsets.size() != tensor.shape().size() || shape.size() != tensor.shape().size()) {
    return TypeError(fmt::format("region rank does not match the tensor: offsets {}, shape {}, tensor {}",
                                 OffsetsStr(offsets), ShapeStr(shape), tensor.str()),
                     span);
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t offset = offsets[d].value_or(0);
    // A dynamic axis has no extent to check against here; the run checks each access.
    const bool dynamic = tensor.shape()[d] == kDynamicExtent;
    if (offset < 0 || shape[d] <= 0 || (!dynamic && offset + shape[d] > tensor.shape()[d])) {
      return TypeError(fmt::format("region at offsets {} with shape {} is outside tensor {} (dimension {})",
                                   OffsetsStr(offsets), ShapeStr(shape), tensor.str(), d),
                       span);
    }
  }
  return true;
}

Result<ValidShape> CheckValidShape(const std::vector<ExprPtr>& extents, const Shape& shape, const std::string& what,
                                   const Span& span) {
  if (extents.size() != shape.size())
    return TypeError(fmt::format("{} has {} extents for a tile of rank {} ({})", what, extents.size(), shape.size(),
                                 ShapeStr(shape)),
                     span);
  for (size_t d = 0; d < extents.size(); ++d) {
    const auto* scalar = extents[d]->type()->As<ScalarType>();
    if (!scalar || !IsInteger(scalar->dtype()))
      return TypeError(fmt::format("{} must be integers, got {}", what, extents[d]->type()->str()), span);
    if (auto value = AsConstInt(extents[d]); value && (*value < 0 || *value > shape[d]))
      return TypeError(fmt::format("{} extent {} of dimension {} is outside the tile's {} (tile shape {})", what,
                                   *value, d, shape[d], ShapeStr(shape)),
                       span, "a valid region can only narrow the tile");
  }
  return ValidShape(extents);
}

Shape StaticValidExtents(const TileType& tile) {
  if (!tile.has_partial_valid_shape()) return tile.shape();
  Shape extents;
  for (const auto& extent : tile.valid_shape()) extents.push_back(AsConstInt(extent).value_or(1));
  return extents;
}

bool IsVectorWordDtype(DataType dtype) {
  switch (dtype) {
    case DataType::INT8:
    case DataType::UINT8:
    case DataType::INT16:
    case DataType::UINT16:
    case DataType::INT32:
    case DataType::UINT32:
    case DataType::FP16:
    case DataType::BF16:
    case DataType::FP32: return true;
    default: return false;
  }
}

Result<bool> CheckFloatDtype(DataType dtype, const std::string& op, const Span& span) {
  if (IsFloat(dtype)) return true;
  return TypeError(fmt::format("{} needs a floating-point tile, got {}", op, DataTypeName(dtype)), span);
}

bool IsIntegralConstant(const ExprPtr& expr) {
  const auto* constant = expr->As<ConstFloat>();
  return constant && std::isfinite(constant->value()) && constant->value() == std::trunc(constant->value());
}

}  // namespace pypto::ir::ops
