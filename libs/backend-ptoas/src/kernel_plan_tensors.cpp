// The Planner's checks of tensor operands (kernel_planner.h): which parameter a tensor is, the views
// loads and stores need and their layout, and single-element reads and writes (pl.read, pl.write) of
// tensors and tiles.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "kernel_planner.h"
#include "mlir_types.h"
#include "pypto/ir/row_merge.h"

namespace pypto::backend_ptoas::detail {

// pl.read / pl.write of one integer element (a block table's entry, an index kept in a tile).
// Elements live at the flat row-major offset of their indices: a tensor parameter's are read with
// pto.load_scalar from its pointer (no view is needed) and written with pto.store_scalar, a tile's
// with pto.tgetval / pto.tsetval. The value is an index like any other integer scalar (the
// caller checked a read's result is an integer).
Status Planner::CheckElementRead(const ir::Call& call, const ir::Span& span) {
  const std::string& op = call.target_name();
  if (op == "tile.read") {
    if (auto ok = CheckTileOperand(call.args()[0], op, span); !ok) return ok;
  } else if (auto param = ParamOf(call.args()[0], op, span); !param) {
    return pypto::unexpected(param.error());
  }
  return CheckOffsets(call.args()[1], op, span);
}

// `t = pl.write(t, [i, j], v)`: the element replaced in place, so the result names t's buffer.
Status Planner::CheckTileWrite(const ir::Call& call, const ir::Span& span, const ir::AssignStmt* assign) {
  if (auto ok = CheckTileOperand(call.args()[0], "tile.write", span); !ok) return ok;
  const auto& tile = *call.args()[0]->As<ir::Var>();
  if (auto ok = CheckWrittenValue(tile.type()->As<ir::TileType>()->dtype(), call.args()[2], "tile.write", "tile", span);
      !ok)
    return ok;
  if (auto ok = CheckOffsets(call.args()[1], "tile.write", span); !ok) return ok;
  return assign ? AliasTile(*assign->var(), tile, span) : Status{};
}

// The value pl.write stores: an index value for integer elements; for floating-point ones a scalar
// operand at the element type (a literal, a scalar parameter or a floating-point element read).
Status Planner::CheckWrittenValue(ir::DataType dtype, const ir::ExprPtr& value, std::string_view op,
                                  std::string_view what, const ir::Span& span) {
  if (ir::IsFloat(dtype) && MlirElementType(dtype)) {
    const auto* var = value->As<ir::Var>();
    const bool scalar = value->Is<ir::ConstFloat>() || value->Is<ir::ConstInt>() ||
                        (var && (plan_.float_scalars.contains(var) ||
                                 std::any_of(plan_.scalar_params.begin(), plan_.scalar_params.end(),
                                             [&](const ir::VarPtr& param) { return param.get() == var; })));
    if (scalar) return CheckScalarOperand(value, dtype, op, span);
  }
  if (auto ok = CheckIntegerElements(dtype, op, what, span); !ok) return ok;
  return CheckIndexExpr(value, fmt::format("the value of '{}'", op), span);
}

Status Planner::CheckIntegerElements(ir::DataType dtype, std::string_view op, std::string_view what,
                                     const ir::Span& span) const {
  if (IsSignedInteger(dtype)) return {};
  return Error(span, fmt::format("backend-ptoas does not lower the single-element access '{}' of a {} {} yet in "
                                 "kernel '{}'; it writes integer elements, and floating-point ones from a literal, a scalar parameter or "
                                 "an element read",
                                 op, ir::DataTypeName(dtype), what, kernel_.name()));
}

// `pl.write(counts, [i], n)`: the index value narrowed to the element type. The result names the
// parameter, as a store's does.
Status Planner::CheckTensorWrite(const ir::Call& call, const ir::Span& span, const ir::AssignStmt* assign) {
  auto param = ParamOf(call.args()[0], "tensor.write", span);
  if (!param) return pypto::unexpected(param.error());
  if (auto ok = CheckWrittenValue(call.args()[0]->type()->As<ir::TensorType>()->dtype(), call.args()[2],
                                  "tensor.write", "tensor", span);
      !ok)
    return ok;
  if (auto ok = CheckOffsets(call.args()[1], "tensor.write", span); !ok) return ok;
  if (assign) plan_.tensor_param_of[assign->var().get()] = *param;
  return {};
}

// The parameter whose memory a tensor operand is.
pypto::expected<const ir::Var*, std::string> Planner::ParamOf(const ir::ExprPtr& arg, std::string_view op,
                                                             const ir::Span& span) const {
  const auto* var = arg->As<ir::Var>();
  auto it = var ? plan_.tensor_param_of.find(var) : plan_.tensor_param_of.end();
  if (it == plan_.tensor_param_of.end())
    return Error(span, fmt::format("the tensor operand of '{}' is not a parameter of kernel '{}'", op,
                                   kernel_.name()));
  return it->second;
}

// A tensor operand read or written through a view (loads and stores): its parameter gets one.
Status Planner::CheckTensorOperand(const ir::ExprPtr& arg, std::string_view op, const ir::Span& span) {
  auto param = ParamOf(arg, op, span);
  if (!param) return pypto::unexpected(param.error());
  used_.insert(*param);
  return {};
}

// pto.tload / pto.tstore need the tile's layout to be the tensor view's: a column-vector tensor
// (DN in ptoas) pairs with column-vector tiles only.
// shapes= of a store that names the N-d window whose leading dimensions a 2-D tile's rows merge
// (FlattenTileNdTo2D): tstore writes a [rows, cols] tile into an N-d partition row by row.
bool Planner::IsRowMergedWindow(const ir::Shape& window, const ir::Shape& tile) {
  return ir::IsRowMergedFrom(tile, window);
}

// pto-isa's TSTORE also takes a one-row Vec tile into any layout (its "special case of one row/one
// column"), except for 64-bit elements on a2a3: a [1, C] tile's single element stores into a [M, 1]
// tensor (an inverse norm kept per row).
Status Planner::CheckTensorLayout(const ir::Var& tensor, const ir::TileType& tile, std::string_view what,
                                  const ir::Span& span) const {
  const ir::Var& param = *plan_.tensor_param_of.at(&tensor);
  const auto& type = *param.type()->As<ir::TensorType>();
  if (!IsColumnVectorTensor(type) || IsColumnVector(tile)) return {};
  const bool one_row_store = what == "store" && tile.memory_space() == ir::MemorySpace::Vec &&
                             TileRowsCols(tile).rows == 1 && ir::DataTypeBits(tile.dtype()) < 64;
  if (one_row_store) return {};
  return Error(span, fmt::format("backend-ptoas cannot {} the tile {} {} tensor '{}' {} in kernel '{}': ptoas lays "
                                 "a tensor whose last dimension is 1 out column-major (DN), which only a [N, 1] "
                                 "Vec tile (N > 1){} matches",
                                 what, tile.str(), what == "load" ? "from" : "into", param.name_hint(), type.str(),
                                 kernel_.name(),
                                 what == "store" ? " or a one-row Vec tile of elements under 64 bits" : ""));
}

Status Planner::CheckStaticInts(const ir::ExprPtr& arg, std::string_view what, std::string_view op,
                                const ir::Span& span) {
  const auto* tuple = arg->As<ir::TupleLiteral>();
  bool ok = tuple != nullptr;
  if (ok) {
    for (const auto& element : tuple->elements()) ok = ok && ir::AsConstInt(element).has_value();
  }
  if (!ok) return Error(span, fmt::format("the {} of '{}' must be integer literals", what, op));
  return {};
}

}  // namespace pypto::backend_ptoas::detail
