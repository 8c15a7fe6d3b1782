// tile.matmul_mx family: A5's MX block-scale matmul. The cube multiplies FP8E4M3FN matrices whose
// values are scaled per block of 32 along K by an E8M0 exponent (2^(e - 127)):
//
//   tile.matmul_mx(a, a_scale, b, b_scale)             C[m, n] = sum_k a[m, k] 2^sa[m, k/32] b[k, n] 2^sb[k/32, n]
//   tile.matmul_mx_acc(c, a, a_scale, b, b_scale)      C += the same, in place
//   tile.matmul_mx_bias(a, a_scale, b, b_scale, bias)  the same plus the [1, N] bias row
//
// a is Left [M, K], b Right [K, N], a_scale LeftScale [M, K/32], b_scale RightScale [K/32, N] (each
// FP8E8M0), the result an FP32 Acc [M, N]. The cube reads whole fractals: M a multiple of 16, K of
// 64 and N of 32. Packed FP4 data is not multiplied natively: it is cast to FP8E4M3FN first.
#include <fmt/format.h>

#include <utility>

#include "op_checks.h"

namespace pypto::ir {
namespace {

using namespace ops;

// An operand in `buffer`, or in Vec/Mat (InferTileMemorySpace moves it there), as a 2-D tile.
Result<const TileType*> ExpectMxOperand(const ExprPtr& expr, MemorySpace buffer, const std::string& what,
                                        const Span& span) {
  auto tile = ExpectTile(expr, what, span);
  if (!tile) return tile;
  const MemorySpace space = (*tile)->memory_space();
  if (space != buffer && space != MemorySpace::Vec && space != MemorySpace::Mat) {
    return TypeError(fmt::format("{} must be in {}, got {}", what, MemorySpaceName(buffer), (*tile)->str()), span,
                     fmt::format("pl.move(tile, target_memory=pl.Mem.{}) puts it there", MemorySpaceName(buffer)));
  }
  if ((*tile)->shape().size() != 2)
    return TypeError(fmt::format("{} must be a 2-D tile, got {}", what, (*tile)->str()), span);
  return tile;
}

// A data operand: FP8E4M3FN. An FP4 one is named with the cast that makes it one.
Result<const TileType*> ExpectMxData(const std::string& op, const ExprPtr& expr, MemorySpace buffer,
                                     const char* side, const Span& span) {
  auto tile = ExpectMxOperand(expr, buffer, fmt::format("the {} operand of {}", side, op), span);
  if (!tile || (*tile)->dtype() == DataType::FP8E4M3FN) return tile;
  const bool fp4 = (*tile)->dtype() == DataType::FP4;
  return TypeError(fmt::format("the {} operand of {} must be FP8E4M3FN, got {}{}", side, op, (*tile)->str(),
                               fp4 ? " (packed FP4 is not multiplied natively)" : ""),
                   span, fp4 ? "cast it first: pl.cast(tile, pl.FP8E4M3FN)" : "");
}

// A scale operand: FP8E8M0 of exactly `rows` x `cols`.
Result<bool> ExpectMxScale(const std::string& op, const ExprPtr& expr, MemorySpace buffer, const char* side,
                           int64_t rows, int64_t cols, const Span& span) {
  auto tile = ExpectMxOperand(expr, buffer, fmt::format("the {} scale of {}", side, op), span);
  if (!tile) return pypto::unexpected(tile.error());
  if ((*tile)->dtype() != DataType::FP8E8M0 || (*tile)->shape() != Shape{rows, cols}) {
    return TypeError(fmt::format("the {} scale of {} must be an FP8E8M0 [{}, {}] tile (one exponent per 32 "
                                 "elements of K), got {}",
                                 side, op, rows, cols, (*tile)->str()),
                     span);
  }
  return true;
}

// The fractal sizes the cube reads an MX product in.
Result<bool> CheckMxExtents(const std::string& op, int64_t m, int64_t k, int64_t n, const Span& span) {
  if (m % 16 == 0 && k % 64 == 0 && n % 32 == 0) return true;
  return TypeError(fmt::format("{} of [{}, {}] by [{}, {}] needs M a multiple of 16, K of 64 and N of 32", op, m, k, k,
                               n),
                   span, "pad the operands to whole fractals");
}

// The FP32 Acc [M, N] product of the four operands starting at args[first].
Result<TypePtr> DeduceMxProduct(const std::string& op, const std::vector<ExprPtr>& args, size_t first,
                                const Span& span) {
  auto lhs = ExpectMxData(op, args[first], MemorySpace::Left, "left", span);
  if (!lhs) return pypto::unexpected(lhs.error());
  auto rhs = ExpectMxData(op, args[first + 2], MemorySpace::Right, "right", span);
  if (!rhs) return pypto::unexpected(rhs.error());
  const int64_t m = (*lhs)->shape()[0], k = (*lhs)->shape()[1], n = (*rhs)->shape()[1];
  if ((*rhs)->shape()[0] != k) {
    return TypeError(fmt::format("{} cannot multiply {} by {}: the inner dimensions must agree", op, (*lhs)->str(),
                                 (*rhs)->str()),
                     span);
  }
  if ((*lhs)->has_partial_valid_shape() || (*rhs)->has_partial_valid_shape())
    return TypeError(fmt::format("{} multiplies whole tiles; {} or {} has a partial valid shape", op, (*lhs)->str(),
                                 (*rhs)->str()),
                     span);
  if (auto ok = CheckMxExtents(op, m, k, n, span); !ok) return pypto::unexpected(ok.error());
  if (auto ok = ExpectMxScale(op, args[first + 1], MemorySpace::LeftScale, "left", m, k / 32, span); !ok)
    return pypto::unexpected(ok.error());
  if (auto ok = ExpectMxScale(op, args[first + 3], MemorySpace::RightScale, "right", k / 32, n, span); !ok)
    return pypto::unexpected(ok.error());
  return TypePtr(std::make_shared<TileType>(Shape{m, n}, DataType::FP32, MemorySpace::Acc));
}

Result<TypePtr> DeduceMatmulMx(const std::vector<ExprPtr>& args, const OpAttrs&, const Span& span) {
  return DeduceMxProduct("tile.matmul_mx", args, 0, span);
}

Result<TypePtr> DeduceMatmulMxAcc(const std::vector<ExprPtr>& args, const OpAttrs&, const Span& span) {
  const std::string op = "tile.matmul_mx_acc";
  auto product = DeduceMxProduct(op, args, 1, span);
  if (!product) return product;
  auto acc = ExpectTile(args[0], fmt::format("the accumulator of {}", op), span);
  if (!acc) return pypto::unexpected(acc.error());
  // Shape and dtype: once placed the accumulator also carries its buffer, which the product has not.
  const auto* sum = (*product)->As<TileType>();
  if ((*acc)->memory_space() != MemorySpace::Acc || (*acc)->shape() != sum->shape() || (*acc)->dtype() != sum->dtype()) {
    return TypeError(fmt::format("{} adds a {} product into {}: the accumulator must be an Acc tile of that shape",
                                 op, (*product)->str(), (*acc)->str()),
                     span);
  }
  return TypePtr(std::make_shared<TileType>((*acc)->shape(), (*acc)->dtype(), MemorySpace::Acc, (*acc)->memref()));
}

Result<TypePtr> DeduceMatmulMxBias(const std::vector<ExprPtr>& args, const OpAttrs&, const Span& span) {
  const std::string op = "tile.matmul_mx_bias";
  auto product = DeduceMxProduct(op, args, 0, span);
  if (!product) return product;
  const int64_t n = (*product)->As<TileType>()->shape()[1];
  auto bias = ExpectMxOperand(args[4], MemorySpace::Bias, fmt::format("the bias of {}", op), span);
  if (!bias) return pypto::unexpected(bias.error());
  if ((*bias)->dtype() != DataType::FP32 || (*bias)->shape() != Shape{1, n}) {
    return TypeError(fmt::format("the bias of {} must be an FP32 [1, {}] row, got {}", op, n, (*bias)->str()), span);
  }
  return product;
}

}  // namespace

void RegisterTileMxOps(OpRegistry& registry) {
  const std::vector<std::pair<int, MemorySpace>> product = {{0, MemorySpace::Left},
                                                            {1, MemorySpace::LeftScale},
                                                            {2, MemorySpace::Right},
                                                            {3, MemorySpace::RightScale}};
  std::vector<std::pair<int, MemorySpace>> accumulated;
  for (auto [index, space] : product) accumulated.emplace_back(index + 1, space);
  auto biased = product;
  biased.emplace_back(4, MemorySpace::Bias);
  registry.Register(OpDef{.name = "tile.matmul_mx",
                          .description = "C = MX block-scale A @ B: FP8E4M3FN Left [M, K] and Right [K, N], their "
                                         "E8M0 scales per 32 of K, into an FP32 Acc [M, N]",
                          .params = {Arg("lhs"), Arg("lhs_scale"), Arg("rhs"), Arg("rhs_scale")},
                          .deduce_type = DeduceMatmulMx,
                          .affinity = CoreAffinity::Cube,
                          .cube_operands = product});
  registry.Register(OpDef{.name = "tile.matmul_mx_acc",
                          .description = "acc += MX block-scale A @ B, updating the Acc tile in place",
                          .params = {Arg("acc"), Arg("lhs"), Arg("lhs_scale"), Arg("rhs"), Arg("rhs_scale")},
                          .deduce_type = DeduceMatmulMxAcc,
                          .affinity = CoreAffinity::Cube,
                          .result_aliases_arg = 0,
                          .cube_operands = accumulated});
  registry.Register(OpDef{.name = "tile.matmul_mx_bias",
                          .description = "C = MX block-scale A @ B + bias, the [1, N] Bias row added to every row",
                          .params = {Arg("lhs"), Arg("lhs_scale"), Arg("rhs"), Arg("rhs_scale"), Arg("bias")},
                          .deduce_type = DeduceMatmulMxBias,
                          .affinity = CoreAffinity::Cube,
                          .cube_operands = biased});
}

}  // namespace pypto::ir
