// tile.* reductions and broadcasts over matrix tiles (see MatrixTile: a tile of higher rank with
// leading 1s is the matrix of its last two dimensions, and keeps its leading 1s). Row ops collapse
// the columns ([M, N] -> [M, 1]), column ops the rows ([M, N] -> [1, N]); the expand ops broadcast
// such a vector back across a tile, combining it with the tile's elements.
#include <fmt/format.h>

#include "op_checks.h"

namespace pypto::ir {
namespace {

using namespace ops;

enum class Axis { Row, Col };

// The valid shape of a reduction's result: the operand's region along the kept axis, 1 along the
// reduced one; empty when the operand is valid as a whole.
ValidShape ReducedValidShape(const MatrixTile& tile, Axis axis, const Span& span) {
  if (!tile->has_partial_valid_shape()) return {};
  auto one = std::make_shared<ConstInt>(1, DataType::INDEX, span);
  return axis == Axis::Row ? tile.ValidReshaped(tile.valid_rows(), one, span)
                           : tile.ValidReshaped(one, tile.valid_cols(), span);
}

// Row reductions need a scratch tile of the input's dtype, at least as large as the input.
Result<TypePtr> DeduceReduce(const std::string& op, Axis axis, const std::vector<ExprPtr>& args, const Span& span) {
  auto tile = ExpectMatrixTile(args[0], fmt::format("the operand of {}", op), span);
  if (!tile) return pypto::unexpected(tile.error());
  if (args.size() > 1) {
    auto tmp = ExpectTile(args[1], fmt::format("the scratch tile of {}", op), span);
    if (!tmp) return pypto::unexpected(tmp.error());
    if ((*tmp)->dtype() != (*tile)->dtype() || (*tmp)->num_elements() < (*tile)->num_elements()) {
      return TypeError(fmt::format("the scratch tile of {} must be a {} tile of at least {} elements, got {}", op,
                                   DataTypeName((*tile)->dtype()), (*tile)->num_elements(), (*tmp)->str()),
                       span);
    }
  }
  Shape result = axis == Axis::Row ? tile->Reshaped(tile->rows(), 1) : tile->Reshaped(1, tile->cols());
  // The reduction covers the valid region; the result is valid along the axis it keeps.
  return std::make_shared<TileType>(result, (*tile)->dtype(), (*tile)->memory_space(), std::nullopt,
                                    ReducedValidShape(*tile, axis, span));
}

// Index-of-extremum reductions: an INT32 index per row (the column of its extremum) or per column
// (the row of its extremum), over the valid region. The PTO instructions read FP16 or FP32 values
// and use the scratch tile at the operand's exact extent, so a larger one is refused too.
Result<TypePtr> DeduceArgReduce(const std::string& op, Axis axis, const std::vector<ExprPtr>& args,
                                const Span& span) {
  auto tile = ExpectMatrixTile(args[0], fmt::format("the operand of {}", op), span);
  if (!tile) return pypto::unexpected(tile.error());
  const DataType dtype = (*tile)->dtype();
  if (dtype != DataType::FP16 && dtype != DataType::FP32) {
    return TypeError(fmt::format("the operand of {} must be an FP16 or FP32 tile, got {}", op, (*tile)->str()), span,
                     "pl.cast the tile to pl.FP32 first");
  }
  auto tmp = ExpectTile(args[1], fmt::format("the scratch tile of {}", op), span);
  if (!tmp) return pypto::unexpected(tmp.error());
  if ((*tmp)->dtype() != dtype || (*tmp)->shape() != (*tile)->shape()) {
    return TypeError(fmt::format("the scratch tile of {} must be a {} {} tile like its operand, got {}", op,
                                 ShapeStr((*tile)->shape()), DataTypeName(dtype), (*tmp)->str()),
                     span, "create it with pl.tile.create(<the operand's shape>, dtype=<its dtype>)");
  }
  const Shape valid = StaticValidExtents(tile->type());
  const size_t reduced = tile->leading() + (axis == Axis::Row ? 1 : 0);
  if (valid[reduced] == 0) {
    return TypeError(fmt::format("{} of {} has no element to take the index of: its valid region is empty along "
                                 "the reduced axis",
                                 op, (*tile)->str()),
                     span);
  }
  Shape result = axis == Axis::Row ? tile->Reshaped(tile->rows(), 1) : tile->Reshaped(1, tile->cols());
  return std::make_shared<TileType>(result, DataType::INT32, (*tile)->memory_space(), std::nullopt,
                                    ReducedValidShape(*tile, axis, span));
}

// The columns of a packed row vector: one 32-byte block of lanes per row, which row_expand_add
// repeats across the row (PTO's row-major carrier of TROWEXPANDADD).
int64_t PackedRowLanes(DataType dtype) { return 32 / static_cast<int64_t>(DataTypeBytes(dtype)); }

// `vec` must be [M, 1] (row) or [1, N] (column) for an [M, N] tile, of the same dtype; row_expand_add
// also takes a packed [M, 32 bytes] row vector and an optional scratch tile. Only the matrices are
// compared: pypto-lib broadcasts an [M, 1] vector across a [1, 1, M, N] block.
Result<TypePtr> DeduceExpand(const std::string& op, Axis axis, const std::vector<ExprPtr>& args, const Span& span) {
  auto tile = ExpectMatrixTile(args[0], fmt::format("the tile operand of {}", op), span);
  if (!tile) return pypto::unexpected(tile.error());
  auto vec = ExpectMatrixTile(args[1], fmt::format("the vector operand of {}", op), span);
  if (!vec) return pypto::unexpected(vec.error());
  if (args.size() > 2) {
    auto tmp = ExpectTile(args[2], fmt::format("the scratch tile of {}", op), span);
    if (!tmp) return pypto::unexpected(tmp.error());
  }
  const Shape& shape = (*tile)->shape();
  const Shape expected = axis == Axis::Row ? Shape{tile->rows(), 1} : Shape{1, tile->cols()};
  const Shape got{vec->rows(), vec->cols()};
  const bool packed = op == "tile.row_expand_add" && DataTypeBytes((*tile)->dtype()) > 0 &&
                      got == Shape{tile->rows(), PackedRowLanes((*tile)->dtype())};
  if ((got != expected && !packed) || (*vec)->dtype() != (*tile)->dtype()) {
    return TypeError(fmt::format("{} broadcasts a {} {} vector across {}, got {}", op, ShapeStr(expected),
                                 DataTypeName((*tile)->dtype()), (*tile)->str(), (*vec)->str()),
                     span,
                     axis == Axis::Row ? "a row vector comes from a row reduction such as pl.row_sum"
                                       : "a column vector has shape [1, N]; pl.reshape can turn [N, 1] into it");
  }
  return std::make_shared<TileType>(shape, (*tile)->dtype(), (*tile)->memory_space(), std::nullopt,
                                    (*tile)->valid_shape());
}

Result<TypePtr> DeduceExpandScalar(const std::vector<ExprPtr>& args, const Span& span) {
  auto tile = ExpectTile(args[0], "the target of tile.expands", span);
  if (!tile) return pypto::unexpected(tile.error());
  auto value = ExpectNumericScalar(args[1], "the value of tile.expands", span);
  if (!value) return pypto::unexpected(value.error());
  return std::make_shared<TileType>((*tile)->shape(), (*tile)->dtype(), (*tile)->memory_space());
}

OpDef Reduce(const std::string& name, Axis axis, bool tmp_required, bool tmp_allowed, const std::string& what) {
  const std::string full = "tile." + name;
  std::vector<OpParam> params = {Arg("tile")};
  if (tmp_required) params.push_back(Arg("tmp_tile"));
  else if (tmp_allowed) params.push_back(OptionalArg("tmp_tile"));
  return OpDef{.name = full,
               .description = what,
               .params = std::move(params),
               .deduce_type = [full, axis](const auto& args, const auto&, const Span& span) {
                 return DeduceReduce(full, axis, args, span);
               }};
}

OpDef ArgReduce(const std::string& name, Axis axis, const std::string& what) {
  const std::string full = "tile." + name;
  return OpDef{.name = full,
               .description = what,
               .params = {Arg("tile"), Arg("tmp_tile")},
               .deduce_type = [full, axis](const auto& args, const auto&, const Span& span) {
                 return DeduceArgReduce(full, axis, args, span);
               }};
}

OpDef Expand(const std::string& name, Axis axis, const std::string& what, bool takes_tmp = false) {
  const std::string full = "tile." + name;
  std::vector<OpParam> params = {Arg("tile"), Arg(axis == Axis::Row ? "row_vec" : "col_vec")};
  if (takes_tmp) params.push_back(OptionalArg("tmp"));
  return OpDef{.name = full,
               .description = what,
               .params = std::move(params),
               .deduce_type = [full, axis](const auto& args, const auto&, const Span& span) {
                 return DeduceExpand(full, axis, args, span);
               },
               .inplace_safe = true};
}

}  // namespace

void RegisterTileReductionOps(OpRegistry& registry) {
  for (const char* op : {"sum", "max", "min", "prod"}) {
    registry.Register(Reduce(fmt::format("row_{}", op), Axis::Row, /*tmp_required=*/true, true,
                             fmt::format("{} of each row: [M, N] -> [M, 1]", op)));
  }
  registry.Register(Reduce("col_sum", Axis::Col, false, /*tmp_allowed=*/true, "sum of each column: [M, N] -> [1, N]"));
  for (const char* op : {"max", "min", "prod"}) {
    registry.Register(Reduce(fmt::format("col_{}", op), Axis::Col, false, false,
                             fmt::format("{} of each column: [M, N] -> [1, N]", op)));
  }
  for (const char* op : {"max", "min"}) {
    registry.Register(
        ArgReduce(fmt::format("row_arg{}", op), Axis::Row,
                  fmt::format("INT32 column index of each row's {} (the first of equals): [M, N] -> [M, 1]", op)));
    registry.Register(
        ArgReduce(fmt::format("col_arg{}", op), Axis::Col,
                  fmt::format("INT32 row index of each column's {} (the first of equals): [M, N] -> [1, N]", op)));
  }
  registry.Register(Expand("row_expand", Axis::Row, "each row filled with its element of a [M, 1] vector"));
  registry.Register(Expand("col_expand", Axis::Col, "each column filled with its element of a [1, N] vector"));
  for (const char* op : {"add", "sub", "mul", "div", "max", "min", "expdif"}) {
    const std::string what = std::string(op) == "expdif" ? "exp(x - v)" : fmt::format("x {} v", op);
    // PTOAS's A2/A3 form of TROWEXPANDADD takes a scratch tile.
    const bool add = std::string(op) == "add";
    registry.Register(Expand(fmt::format("row_expand_{}", op), Axis::Row,
                             add ? "x + v with v the row's element, or the row's packed 32-byte block of lanes "
                                   "repeated across it"
                                 : fmt::format("{} with v the row's element", what),
                             /*takes_tmp=*/add));
    registry.Register(
        Expand(fmt::format("col_expand_{}", op), Axis::Col, fmt::format("{} with v the column's element", what)));
  }
  registry.Register(OpDef{.name = "tile.expands",
                          .description = "a tile of the target's shape filled with a scalar",
                          .params = {Arg("target"), Arg("scalar")},
                          .deduce_type = [](const auto& args, const auto&, const Span& span) {
                            return DeduceExpandScalar(args, span);
                          },
                          .inplace_safe = true});
}

}  // namespace pypto::ir
