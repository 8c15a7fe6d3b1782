// tile.matmul family: the cube unit multiplies a Left (L0A) tile by a Right (L0B) tile into an Acc
// (L0C) tile. Accumulation happens in FP32 for floating-point inputs and INT32 for INT8.
//
//   tile.matmul(a, b)              C = A @ B
//   tile.matmul_acc(c, a, b)       C += A @ B, in place (`init_cond`: overwrite instead where it holds)
//   tile.matmul_bias(a, b, bias)   C = A @ B + bias, the [1, N] bias row (in Bias, BT) added to every row
//   tile.gemv / gemv_acc / gemv_bias   the same with a single-row A ([1, K]); `acc_phase` is a hint
//                                  for the device's accumulation pipeline and changes no value
//
// Operands of rank above 2 are batches of matrices: the leading dimensions broadcast as in
// torch.matmul (each pair equal, or one of them 1), and the product holds one matrix per batch
// index. The product's valid region is the lhs's valid rows by the rhs's valid columns, and only
// the lhs's valid part of K is summed.
#include <fmt/format.h>

#include <algorithm>
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

Result<const TileType*> ExpectIn(const ExprPtr& expr, MemorySpace space, const std::string& what, const Span& span) {
  auto tile = ExpectTile(expr, what, span);
  if (tile && (*tile)->memory_space() != space) {
    return TypeError(fmt::format("{} must be in {}, got {}", what, MemorySpaceName(space), (*tile)->str()), span,
                     fmt::format("pl.move(tile, target_memory=pl.Mem.{}) puts it there", MemorySpaceName(space)));
  }
  return tile;
}

// An operand the cube reads from `buffer` (Left, Right or Bias). A Vec, Mat or Acc operand is
// accepted too: the InferTileMemorySpace pass places it (a Vec load becomes a Mat load, then a move
// into the buffer; an Acc tile, a product chained into another matmul, goes through Mat).
Result<const TileType*> ExpectCubeOperand(const ExprPtr& expr, MemorySpace buffer, const std::string& what,
                                          const Span& span) {
  auto tile = ExpectTile(expr, what, span);
  if (!tile) return tile;
  if ((*tile)->shape().size() < 2)
    return TypeError(fmt::format("{} must be a matrix (2-D or more), got {}", what, (*tile)->str()), span);
  const MemorySpace space = (*tile)->memory_space();
  if (space == MemorySpace::Vec || space == MemorySpace::Mat || space == MemorySpace::Acc) return tile;
  return ExpectIn(expr, buffer, what, span);
}

// The constant of a valid extent, or nullopt where it is known only at run time.
std::optional<int64_t> ValidExtent(const TileType& tile, size_t dim) {
  if (!tile.has_partial_valid_shape()) return tile.shape()[dim];
  return AsConstInt(tile.valid_shape()[dim]);
}

// The valid extent of dimension `dim` as an expression; null where the whole extent is valid.
ExprPtr ValidExpr(const TileType& tile, size_t dim) {
  return tile.has_partial_valid_shape() ? tile.valid_shape()[dim] : nullptr;
}

// One matrix operand: its tile and which of its two matrix dimensions is the contraction.
struct MatrixOperand {
  const TileType* tile;
  bool transposed;
  size_t rank() const { return tile->shape().size(); }
  Shape batch() const { return Shape(tile->shape().begin(), tile->shape().end() - 2); }
  size_t row_dim() const { return rank() - 2; }
  size_t col_dim() const { return rank() - 1; }
};

// The shape of a matmul's result before its type is made: the broadcast batch, [rows, cols] and
// the valid extents of the two (null: whole).
struct Product {
  Shape batch;
  int64_t rows = 0, cols = 0;
  ExprPtr valid_rows, valid_cols;
  DataType dtype = DataType::FP32;

  Shape shape() const {
    Shape shape = batch;
    shape.push_back(rows);
    shape.push_back(cols);
    return shape;
  }
  ValidShape valid_shape(const Span& span) const {
    if (!valid_rows && !valid_cols) return {};
    ValidShape valid;
    for (int64_t extent : batch) valid.push_back(std::make_shared<ConstInt>(extent, DataType::INDEX, span));
    valid.push_back(valid_rows ? valid_rows : std::make_shared<ConstInt>(rows, DataType::INDEX, span));
    valid.push_back(valid_cols ? valid_cols : std::make_shared<ConstInt>(cols, DataType::INDEX, span));
    return valid;
  }
  TypePtr Type(const Span& span) const {
    return std::make_shared<TileType>(shape(), dtype, MemorySpace::Acc, std::nullopt, valid_shape(span));
  }
};

// The batch the two operands' leading dimensions broadcast to, aligned at the right: each pair of
// extents is equal or one of them is 1 (a 2-D operand is one matrix for every batch index).
Result<Shape> BroadcastBatch(const std::string& op, const MatrixOperand& lhs, const MatrixOperand& rhs,
                             const Span& span) {
  const Shape a = lhs.batch(), b = rhs.batch();
  Shape batch(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < batch.size(); ++i) {
    const int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1) {
      return TypeError(fmt::format("{} cannot broadcast the batch dimensions of {} and {}: {} against {}", op,
                                   lhs.tile->str(), rhs.tile->str(), x, y),
                       span, "each pair of leading dimensions must be equal, or one of them 1");
    }
    batch[batch.size() - 1 - i] = std::max(x, y);
  }
  return batch;
}

// lhs [..., M, K] times rhs [..., K, N]; with `a_trans=True` lhs is given as [..., K, M], with
// `b_trans=True` rhs as [..., N, K] (the cube reads it transposed).
Result<Product> DeduceProduct(const std::string& op, const ExprPtr& lhs_expr, const ExprPtr& rhs_expr,
                              const OpAttrs& kwargs, const Span& span) {
  auto lhs_tile = ExpectCubeOperand(lhs_expr, MemorySpace::Left, fmt::format("the left operand of {}", op), span);
  if (!lhs_tile) return pypto::unexpected(lhs_tile.error());
  auto rhs_tile = ExpectCubeOperand(rhs_expr, MemorySpace::Right, fmt::format("the right operand of {}", op), span);
  if (!rhs_tile) return pypto::unexpected(rhs_tile.error());
  const MatrixOperand lhs{*lhs_tile, FindAttr<bool>(kwargs, "a_trans").value_or(false)};
  const MatrixOperand rhs{*rhs_tile, FindAttr<bool>(kwargs, "b_trans").value_or(false)};
  // Where M, K and N lie in each operand.
  const size_t m_dim = lhs.transposed ? lhs.col_dim() : lhs.row_dim();
  const size_t lhs_k_dim = lhs.transposed ? lhs.row_dim() : lhs.col_dim();
  const size_t rhs_k_dim = rhs.transposed ? rhs.col_dim() : rhs.row_dim();
  const size_t n_dim = rhs.transposed ? rhs.row_dim() : rhs.col_dim();
  if (lhs.tile->shape()[lhs_k_dim] != rhs.tile->shape()[rhs_k_dim] || lhs.tile->dtype() != rhs.tile->dtype()) {
    return TypeError(fmt::format("{} cannot multiply {}{} by {}{}: the inner dimensions and dtypes must agree", op,
                                 lhs.tile->str(), lhs.transposed ? " (transposed)" : "", rhs.tile->str(),
                                 rhs.transposed ? " (transposed)" : ""),
                     span);
  }
  // The cube sums the lhs's valid K; the rhs must hold every row of it.
  const auto lhs_k = ValidExtent(*lhs.tile, lhs_k_dim), rhs_k = ValidExtent(*rhs.tile, rhs_k_dim);
  if (lhs_k && rhs_k && *lhs_k > *rhs_k) {
    return TypeError(fmt::format("{} sums {} valid elements of K from {} but {} has only {} of them", op, *lhs_k,
                                 lhs.tile->str(), rhs.tile->str(), *rhs_k),
                     span, "narrow the left operand's valid shape to the right operand's");
  }
  auto dtype = AccumulatorDtype(lhs.tile->dtype(), span);
  if (!dtype) return pypto::unexpected(dtype.error());
  auto batch = BroadcastBatch(op, lhs, rhs, span);
  if (!batch) return pypto::unexpected(batch.error());
  return Product{.batch = std::move(*batch),
                 .rows = lhs.tile->shape()[m_dim],
                 .cols = rhs.tile->shape()[n_dim],
                 .valid_rows = ValidExpr(*lhs.tile, m_dim),
                 .valid_cols = ValidExpr(*rhs.tile, n_dim),
                 .dtype = *dtype};
}

// `out_dtype=` names the Acc dtype; the cube unit has one per input dtype, so it may only confirm it.
Result<bool> CheckOutDtype(const std::string& op, const Product& product, const OpAttrs& kwargs, const Span& span) {
  const auto out_dtype = FindAttr<DataType>(kwargs, "out_dtype");
  if (out_dtype && *out_dtype != product.dtype) {
    return TypeError(fmt::format("{} accumulates these inputs in {}, not out_dtype={}", op, DataTypeName(product.dtype),
                                 DataTypeName(*out_dtype)),
                     span, fmt::format("use out_dtype=pl.{} or cast the result", DataTypeName(product.dtype)));
  }
  return true;
}

// The accumulator of an in-place form (matmul_acc, gemv_acc): an Acc tile of the product's shape
// and dtype. The result is that tile, its buffer and valid region included.
Result<TypePtr> UpdatedAccumulator(const std::string& op, const ExprPtr& acc_expr, const Product& product,
                                   const Span& span) {
  auto acc = ExpectIn(acc_expr, MemorySpace::Acc, fmt::format("the accumulator of {}", op), span);
  if (!acc) return pypto::unexpected(acc.error());
  if (product.shape() != (*acc)->shape() || product.dtype != (*acc)->dtype()) {
    return TypeError(fmt::format("{} adds a {} product into a {} accumulator", op, product.Type(span)->str(),
                                 (*acc)->str()),
                     span);
  }
  return std::make_shared<TileType>((*acc)->shape(), (*acc)->dtype(), MemorySpace::Acc, (*acc)->memref(),
                                    (*acc)->valid_shape());
}

// `init_cond=`: a boolean; where it holds the accumulator is overwritten instead of added to.
Result<bool> CheckInitCond(const std::string& op, const std::vector<ExprPtr>& args, size_t index, const Span& span) {
  if (args.size() <= index) return true;
  const auto* scalar = args[index]->type()->As<ScalarType>();
  if (!scalar || (scalar->dtype() != DataType::BOOL && !IsInteger(scalar->dtype())))
    return TypeError(fmt::format("the init_cond of {} must be a boolean scalar, got {}", op, args[index]->type()->str()),
                     span, "e.g. init_cond=(k0 == 0) on the first step of a K loop");
  return true;
}

// The [1, N] bias row: the accumulator's dtype, as wide as the product, in Bias (or placed there).
Result<bool> CheckBias(const std::string& op, const ExprPtr& bias_expr, const Product& product, const Span& span) {
  const std::string what = fmt::format("the bias of {}", op);
  auto bias = ExpectCubeOperand(bias_expr, MemorySpace::Bias, what, span);
  if (!bias) return pypto::unexpected(bias.error());
  const Shape& shape = (*bias)->shape();
  const bool row = std::all_of(shape.begin(), shape.end() - 1, [](int64_t extent) { return extent == 1; });
  if (!row || shape.back() != product.cols || (*bias)->dtype() != product.dtype) {
    return TypeError(fmt::format("{} must be a [1, {}] {} row (the product's columns and accumulator dtype), got {}",
                                 what, product.cols, DataTypeName(product.dtype), (*bias)->str()),
                     span);
  }
  const size_t cols = shape.size() - 1;
  const auto bias_cols = ValidExtent(**bias, cols);
  const auto product_cols = product.valid_cols ? AsConstInt(product.valid_cols) : product.cols;
  if (bias_cols && product_cols && *bias_cols < *product_cols) {
    return TypeError(fmt::format("{} has {} valid columns but the product has {}", what, *bias_cols, *product_cols),
                     span);
  }
  return true;
}

Result<TypePtr> DeduceMatmul(const std::vector<ExprPtr>& args, const OpAttrs& kwargs, const Span& span) {
  auto product = DeduceProduct("tile.matmul", args[0], args[1], kwargs, span);
  if (!product) return pypto::unexpected(product.error());
  if (auto ok = CheckOutDtype("tile.matmul", *product, kwargs, span); !ok) return pypto::unexpected(ok.error());
  return product->Type(span);
}

Result<TypePtr> DeduceMatmulAcc(const std::vector<ExprPtr>& args, const OpAttrs& kwargs, const Span& span) {
  if (auto ok = CheckInitCond("tile.matmul_acc", args, 3, span); !ok) return pypto::unexpected(ok.error());
  auto product = DeduceProduct("tile.matmul_acc", args[1], args[2], kwargs, span);
  if (!product) return pypto::unexpected(product.error());
  return UpdatedAccumulator("tile.matmul_acc", args[0], *product, span);
}

Result<TypePtr> DeduceMatmulBias(const std::vector<ExprPtr>& args, const OpAttrs& kwargs, const Span& span) {
  auto product = DeduceProduct("tile.matmul_bias", args[0], args[1], kwargs, span);
  if (!product) return pypto::unexpected(product.error());
  if (auto ok = CheckBias("tile.matmul_bias", args[2], *product, span); !ok) return pypto::unexpected(ok.error());
  return product->Type(span);
}

// ---- GEMV: the single-row case ---------------------------------------------------------------

Result<bool> CheckAccPhase(const std::string& op, const OpAttrs& kwargs, const Span& span) {
  const auto phase = FindAttr<std::string>(kwargs, "acc_phase").value_or("unspecified");
  if (phase == "unspecified" || phase == "partial" || phase == "final") return true;
  return TypeError(fmt::format("the acc_phase of {} is 'unspecified', 'partial' or 'final', got '{}'", op, phase), span);
}

// A GEMV's product: lhs one row ([1, K], its one row valid) times a single matrix rhs.
Result<Product> DeduceGemvProduct(const std::string& op, const ExprPtr& lhs, const ExprPtr& rhs,
                                  const OpAttrs& kwargs, const Span& span) {
  if (auto ok = CheckAccPhase(op, kwargs, span); !ok) return pypto::unexpected(ok.error());
  auto product = DeduceProduct(op, lhs, rhs, kwargs, span);
  if (!product) return product;
  const auto* row = lhs->type()->As<TileType>();
  const bool batched = std::any_of(product->batch.begin(), product->batch.end(), [](int64_t b) { return b != 1; });
  if (product->rows != 1 || (product->valid_rows && AsConstInt(product->valid_rows) != 1) || batched) {
    return TypeError(fmt::format("the left operand of {} must be a single row [1, K], got {}", op, row->str()), span,
                     "use tile.matmul for more rows");
  }
  product->valid_rows = nullptr;
  return product;
}

Result<TypePtr> DeduceGemv(const std::vector<ExprPtr>& args, const OpAttrs& kwargs, const Span& span) {
  auto product = DeduceGemvProduct("tile.gemv", args[0], args[1], kwargs, span);
  if (!product) return pypto::unexpected(product.error());
  return product->Type(span);
}

Result<TypePtr> DeduceGemvAcc(const std::vector<ExprPtr>& args, const OpAttrs& kwargs, const Span& span) {
  auto product = DeduceGemvProduct("tile.gemv_acc", args[1], args[2], kwargs, span);
  if (!product) return pypto::unexpected(product.error());
  return UpdatedAccumulator("tile.gemv_acc", args[0], *product, span);
}

Result<TypePtr> DeduceGemvBias(const std::vector<ExprPtr>& args, const OpAttrs& kwargs, const Span& span) {
  auto product = DeduceGemvProduct("tile.gemv_bias", args[0], args[1], kwargs, span);
  if (!product) return pypto::unexpected(product.error());
  if (auto ok = CheckBias("tile.gemv_bias", args[2], *product, span); !ok) return pypto::unexpected(ok.error());
  return product->Type(span);
}

OpParam Trans(const char* name) { return OptionalAttr(name, OpAttrKind::Bool); }
OpParam AccPhase() { return OptionalAttr("acc_phase", OpAttrKind::String); }

}  // namespace

void RegisterTileMatmulOps(OpRegistry& registry) {
  const std::vector<std::pair<int, MemorySpace>> product = {{0, MemorySpace::Left}, {1, MemorySpace::Right}};
  const std::vector<std::pair<int, MemorySpace>> accumulated = {{1, MemorySpace::Left}, {2, MemorySpace::Right}};
  const std::vector<std::pair<int, MemorySpace>> biased = {
      {0, MemorySpace::Left}, {1, MemorySpace::Right}, {2, MemorySpace::Bias}};
  registry.Register(OpDef{.name = "tile.matmul",
                          .description = "C = A @ B: Left [..., M, K] times Right [..., K, N] into Acc [..., M, N]",
                          .params = {Arg("lhs"), Arg("rhs"), OptionalAttr("out_dtype", OpAttrKind::DType),
                                     Trans("a_trans"), Trans("b_trans")},
                          .deduce_type = DeduceMatmul,
                          .affinity = CoreAffinity::Cube,
                          .cube_operands = product});
  registry.Register(OpDef{.name = "tile.matmul_acc",
                          .description = "acc += A @ B, updating the Acc tile in place (acc = A @ B where init_cond)",
                          .params = {Arg("acc"), Arg("lhs"), Arg("rhs"), Trans("a_trans"), Trans("b_trans"),
                                     OptionalArg("init_cond")},
                          .deduce_type = DeduceMatmulAcc,
                          .affinity = CoreAffinity::Cube,
                          .result_aliases_arg = 0,
                          .cube_operands = accumulated});
  registry.Register(OpDef{.name = "tile.matmul_bias",
                          .description = "C = A @ B + bias: the [1, N] Bias row added to every row of the product",
                          .params = {Arg("lhs"), Arg("rhs"), Arg("bias")},
                          .deduce_type = DeduceMatmulBias,
                          .affinity = CoreAffinity::Cube,
                          .cube_operands = biased});
  registry.Register(OpDef{.name = "tile.gemv",
                          .description = "C = A @ B for a single-row A: Left [1, K] times Right [K, N] into Acc [1, N]",
                          .params = {Arg("lhs"), Arg("rhs"), AccPhase()},
                          .deduce_type = DeduceGemv,
                          .affinity = CoreAffinity::Cube,
                          .cube_operands = product});
  registry.Register(OpDef{.name = "tile.gemv_acc",
                          .description = "acc += A @ B for a single-row A, updating the Acc tile in place",
                          .params = {Arg("acc"), Arg("lhs"), Arg("rhs"), AccPhase()},
                          .deduce_type = DeduceGemvAcc,
                          .affinity = CoreAffinity::Cube,
                          .result_aliases_arg = 0,
                          .cube_operands = accumulated});
  registry.Register(OpDef{.name = "tile.gemv_bias",
                          .description = "C = A @ B + bias for a single-row A",
                          .params = {Arg("lhs"), Arg("rhs"), Arg("bias"), AccPhase()},
                          .deduce_type = DeduceGemvBias,
                          .affinity = CoreAffinity::Cube,
                          .cube_operands = biased});
}

}  // namespace pypto::ir
