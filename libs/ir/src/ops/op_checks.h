// Argument checks shared by the op families' type deduction. Each returns the checked view of an
// argument or a diagnostic naming the argument's role ("the left operand of tile.add").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pypto/ir/op_registry.h"

namespace pypto::ir::ops {

// A statically known list of integers: `[64, 128]`.
Result<Shape> StaticInts(const ExprPtr& expr, const std::string& what, const Span& span);

// Region offsets: integer scalars, known (constants) or computed at run time (nullopt).
using Offsets = std::vector<std::optional<int64_t>>;
Result<Offsets> ScalarOffsets(const ExprPtr& expr, const std::string& what, const Span& span);
std::string OffsetsStr(const Offsets& offsets);

Result<const TensorType*> ExpectTensor(const ExprPtr& expr, const std::string& what, const Span& span);
Result<const TileType*> ExpectTile(const ExprPtr& expr, const std::string& what, const Span& span);
// A tile of rank 2 ([rows, cols]), as row/column reductions and broadcasts need.
Result<const TileType*> ExpectMatrixTile(const ExprPtr& expr, const std::string& what, const Span& span);
Result<const ScalarType*> ExpectNumericScalar(const ExprPtr& expr, const std::string& what, const Span& span);

// [offsets, offsets + shape) must lie inside the tensor; offsets known only at run time are checked
// there.
Result<bool> CheckRegion(const TensorType& tensor, const Offsets& offsets, const Shape& shape, const Span& span);

// A valid shape given for a tile of `shape` (`valid_shape=[r, c]`): one integer scalar per dimension,
// a constant one within [0, dim]. Constants equal to the whole tile come back as an empty shape.
Result<ValidShape> CheckValidShape(const std::vector<ExprPtr>& extents, const Shape& shape, const std::string& what,
                                   const Span& span);

// The extents a tile's valid region certainly has where they are constants, and 1 where they are
// known only at run time (what a static bounds check can use).
Shape StaticValidExtents(const TileType& tile);

Result<bool> CheckFloatDtype(DataType dtype, const std::string& op, const Span& span);

std::string ShapeStr(const Shape& shape);

// The error a Result<TypePtr> deduction returns.
inline pypto::unexpected<Diagnostic> TypeError(std::string message, const Span& span, std::string help = "") {
  return MakeError(DiagnosticKind::Type, std::move(message), span, std::move(help));
}

}  // namespace pypto::ir::ops
