// tile.matmul family: the cube unit multiplies a Left (L0A) tile by a Right (L0B) tile into an Acc
// (L0C) tile. Accumulation happens in FP32 for floating-point inputs and INT32 for INT8.
#include <fmt/format.h>

#include <utility>

#include "op_checks.h"

namespace pypto::ir {
namespace {

using namespace ops;

Result<DataType> AccumulatorDtype(DataType input, const Span& span) {
  switch (input) {
    case DataType::FP32:
    case DataType::FP16:
    case DataType::BF16: return DataType::FP32;
    case DataType::INT8: return DataType::INT32;
    default:
      return TypeError(fmt::format("the cube unit multiplies FP32, FP16, BF16 or INT8 tiles, not {}",
                                   DataTypeName(input)),
                       span);
  }
}

Result<MatrixTile> ExpectIn(const ExprPtr& expr, MemorySpace space, const std::string& what, const Span& span) {
  auto tile = ExpectMatrixTile(expr, what, span);
  if (tile && (*tile)->memory_space() != space) {
    return TypeError(fmt::format("{} must be in {}, got {}", what, MemorySpaceName(space), (*tile)->str()), span,
                     fmt::format("pl.move(tile, target_memory=pl.Mem.{}) puts it there", MemorySpaceName(space)));
  }
  return tile;
}

// A matmul operand must end up in `l0` (Left or Right). A Vec, Mat or Acc operand is accepted too:
// the InferTileMemorySpace pass places it (a Vec load becomes a Mat load, then a move into L0; an
// Acc tile, a product chained into another matmul, goes through Mat).
Result<MatrixTile> ExpectOperand(const ExprPtr& expr, MemorySpace l0, const std::string& what,
                                      const Span& span) {
  auto tile = ExpectMatrixTile(expr, what, span);
  if (!tile) return tile;
  const MemorySpace space = (*tile)->memory_space();
  if (space == MemorySpace::Vec || space == MemorySpace::Mat || space == MemorySpace::Acc) return tile;
  return ExpectIn(expr, l0, what, span);
}

// The [M, N] Acc type of lhs [M, K] x rhs [K, N]; with `a_trans=True` lhs is given as [K, M], with
// `b_trans=True` rhs as [N, K] (the cube reads it transposed). Operands of higher rank are matrices
// with leading 1s; the product has the larger rank of the two, as a batched matmul broadcasting its
// batch dimensions would (a [M, K] slice times a [1, K, N] slice is [1, M, N]).
Result<TypePtr> DeduceProduct(const std::string& op, const ExprPtr& lhs_expr, const ExprPtr& rhs_expr,
                              const OpAttrs& kwargs, const Span& span) {
  auto lhs = ExpectOperand(lhs_expr, MemorySpace::Left, fmt::format("the left operand of {}", op), span);
  if (!lhs) return pypto::unexpected(lhs.error());
  auto rhs = ExpectOperand(rhs_expr, MemorySpace::Right, fmt::format("the right operand of {}", op), span);
  if (!rhs) return pypto::unexpected(rhs.error());
  const MatrixTile& widest = (*rhs)->shape().size() > (*lhs)->shape().size() ? *rhs : *lhs;
  Shape a = {lhs->rows(), lhs->cols()}, b = {rhs->rows(), rhs->cols()};
  const bool a_trans = FindAttr<bool>(kwargs, "a_trans").value_or(false);
  const bool b_trans = FindAttr<bool>(kwargs, "b_trans").value_or(false);
  if (a_trans) std::swap(a[0], a[1]);
  if (b_trans) std::swap(b[0], b[1]);
  if (a[1] != b[0] || (*lhs)->dtype() != (*rhs)->dtype()) {
    return TypeError(fmt::format("{} cannot multiply {}{} by {}{}: the inner dimensions and dtypes must agree", op,
                                 (*lhs)->str(), a_trans ? " (transposed)" : "", (*rhs)->str(),
                                 b_trans ? " (transposed)" : ""),
                     span);
  }
  auto acc = AccumulatorDtype((*lhs)->dtype(), span);
  if (!acc) return pypto::unexpected(acc.error());
  return std::make_shared<TileType>(widest.Reshaped(a[0], b[1]), *acc, MemorySpace::Acc);
}

// `out_dtype=` names the Acc dtype; the cube unit has one per input dtype, so it may only confirm it.
Result<TypePtr> DeduceMatmul(const std::vector<ExprPtr>& args, const OpAttrs& kwargs, const Span& span) {
  auto product = DeduceProduct("tile.matmul", args[0], args[1], kwargs, span);
  if (!product) return product;
  const auto out_dtype = FindAttr<DataType>(kwargs, "out_dtype");
  const auto& acc = static_cast<const TileType&>(**product);
  if (out_dtype && *out_dtype != acc.dtype()) {
    return TypeError(fmt::format("tile.matmul accumulates these inputs in {}, not out_dtype={}",
                                 DataTypeName(acc.dtype()), DataTypeName(*out_dtype)),
                     span, fmt::format("use out_dtype=pl.{} or cast the result", DataTypeName(acc.dtype())));
  }
  return product;
}

Result<TypePtr> DeduceMatmulAcc(const std::vector<ExprPtr>& args, const OpAttrs& kwargs, const Span& span) {
  auto acc = ExpectIn(args[0], MemorySpace::Acc, "the accumulator of tile.matmul_acc", span);
  if (!acc) return pypto::unexpected(acc.error());
  auto product = DeduceProduct("tile.matmul_acc", args[1], args[2], kwargs, span);
  if (!product) return product;
  // Shape, dtype and buffer must agree; the accumulator's placement is the result's.
  const auto& expected = static_cast<const TileType&>(**product);
  if (expected.shape() != (*acc)->shape() || expected.dtype() != (*acc)->dtype()) {
    return TypeError(fmt::format("tile.matmul_acc adds a {} product into a {} accumulator", (*product)->str(),
                                 (*acc)->str()),
                     span);
  }
  return std::make_shared<TileType>((*acc)->shape(), (*acc)->dtype(), MemorySpace::Acc, (*acc)->memref());
}

}  // namespace

void RegisterTileMatmulOps(OpRegistry& registry) {
  registry.Register(OpDef{.name = "tile.matmul",
                          .description = "C = A @ B: Left [M, K] times Right [K, N] into Acc [M, N]",
                          .params = {Arg("lhs"), Arg("rhs"), OptionalAttr("out_dtype", OpAttrKind::DType),
                                     OptionalAttr("a_trans", OpAttrKind::Bool),
                                     OptionalAttr("b_trans", OpAttrKind::Bool)},
                          .deduce_type = DeduceMatmul,
                          .affinity = CoreAffinity::Cube});
  registry.Register(OpDef{.name = "tile.matmul_acc",
                          .description = "acc += A @ B, updating the Acc tile in place",
                          .params = {Arg("acc"), Arg("lhs"), Arg("rhs"), OptionalAttr("a_trans", OpAttrKind::Bool),
                                     OptionalAttr("b_trans", OpAttrKind::Bool)},
                          .deduce_type = DeduceMatmulAcc,
                          .affinity = CoreAffinity::Cube,
                          .result_aliases_arg = 0});
}

}  // namespace pypto::ir
