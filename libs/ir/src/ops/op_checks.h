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

// The matrix a tile stands for. Matrix ops (reductions, broadcasts, matmul, sorting, windows) work
// on [rows, cols]; a tile of higher rank whose leading dimensions (all but the last two) are 1, such
// as pypto-lib's [1, 1, 16, 128] blocks of 4-D tensors, is the matrix of its last two dimensions, and
// the results of these ops keep its leading 1s.
class MatrixTile {
 public:
  explicit MatrixTile(const TileType* tile) : tile_(tile) {}
  const TileType* operator->() const { return tile_; }
  const TileType& type() const { return *tile_; }
  int64_t rows() const { return tile_->shape()[leading()]; }
  int64_t cols() const { return tile_->shape()[leading() + 1]; }
  // How many dimensions come before the matrix's two.
  size_t leading() const { return tile_->shape().size() - 2; }
  // A shape of this tile's rank: its leading 1s, then [rows, cols].
  Shape Reshaped(int64_t rows, int64_t cols) const;
  // The valid extents of the matrix's rows and columns; both null for a tile valid as a whole.
  ExprPtr valid_rows() const;
  ExprPtr valid_cols() const;
  // A valid shape of this tile's rank narrowing the matrix to [rows, cols] (its leading extents kept).
  ValidShape ValidReshaped(ExprPtr rows, ExprPtr cols, const Span& span) const;

 private:
  const TileType* tile_;
};

// A tile read as a matrix: rank 2, or a higher rank whose leading dimensions are 1 (batches of
// matrices are not supported yet).
Result<MatrixTile> ExpectMatrixTile(const ExprPtr& expr, const std::string& what, const Span& span);
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

// 8-, 16- and 32-bit integers, FP16, BF16 and FP32: what the vector unit's data-movement instructions
// (gathers by block, triangular masks) hold.
bool IsVectorWordDtype(DataType dtype);

// A floating-point constant holding an integer, `pl.const(2.0, pl.FP32)`: exactly that integer once
// narrowed to an integer tile's dtype, as upstream narrows the scalar.
bool IsIntegralConstant(const ExprPtr& expr);

std::string ShapeStr(const Shape& shape);

// The error a Result<TypePtr> deduction returns.
inline pypto::unexpected<Diagnostic> TypeError(std::string message, const Span& span, std::string help = "") {
  return MakeError(DiagnosticKind::Type, std::move(message), span, std::move(help));
}

}  // namespace pypto::ir::ops
