// The gathers by index as pto.tgather's index form. TGATHER reads its indices as positions among the
// source's elements, row-major: tile.gather's flat indices are exactly that, one tgather. For
// tile.gather_dim (torch.gather along the last axis) a column index is such a position within one
// row: a one-row gather is one tgather, and a taller one an scf.for over the index's rows, each
// gathering the source's row into the result's row through pto.subset views (upstream lowers it per
// row the same way on a2a3); of a rank-3 source along its first or second axis, one tgather through
// flat positions it computes (LowerBatchGather). A tmp tile the program does not give is an
// alloc_tile in the kernel's Vec scratch (KernelPlan::vec_scratch_offset).
#include <fmt/format.h>

#include "kernel_emitter.h"
#include "mlir_types.h"

namespace pypto::backend_ptoas {
namespace {

// `pto.tgather ins(%src, %indices, %tmp : ..) outs(%dst : ..)`; PTOAS's groups are src, dst, cdst,
// indices, tmp and kValue, sized by attribute.
PtoOp IndexGather(const TypedValue& src, const TypedValue& indices, const TypedValue& tmp, const TypedValue& dst) {
  PtoOp op{.name = "pto.tgather",
           .groups = {{OperandSyntax::Ins, "", {src, indices, tmp}}, {OperandSyntax::Outs, "", {dst}}}};
  op.generic_operands = GenericOperands{{{src}, {dst}, {}, {indices}, {tmp}, {}}, true};
  return op;
}

}  // namespace

void KernelEmitter::LowerGather(const ir::Call& call, const ir::Var& result, const ir::Span& span) {
  const auto& index = *call.args()[1]->As<ir::Var>();
  const auto& index_type = *index.type()->As<ir::TileType>();
  const TypedValue tmp = plan_.scratch_gather_tmps.contains(&call)
                             ? ScratchTile(result.name_hint() + "_tmp", ElementOf(index_type.dtype()),
                                           TileRowsCols(index_type), span)
                             : TileOperand(*call.args()[2]->As<ir::Var>(), false);
  Add(body_, IndexGather(TileOperand(*call.args()[0]->As<ir::Var>(), false), TileOperand(index, false), tmp,
                         TileOperand(result, false)),
      span);
}

void KernelEmitter::LowerGatherDim(const ir::Call& call, const ir::Var& result, const ir::Span& span) {
  if (call.args()[0]->type()->As<ir::TileType>()->shape().size() == 3) return LowerBatchGather(call, result, span);
  const auto& src = *call.args()[0]->As<ir::Var>();
  const auto& index = *call.args()[1]->As<ir::Var>();
  const auto& index_type = *index.type()->As<ir::TileType>();
  const TileExtent extent = TileRowsCols(index_type);
  const TypedValue tmp = ScratchTile(result.name_hint() + "_tmp", ElementOf(index_type.dtype()), {1, extent.cols}, span);
  if (extent.rows == 1) {
    Add(body_, IndexGather(TileOperand(src, false), TileOperand(index, false), tmp, TileOperand(result, false)), span);
    return;
  }
  const TypedValue row{names_.Named(result.name_hint() + "_row"), "index"};
  const TypedValue first = IndexConstant(0);
  AddStructural(fmt::format("scf.for {} = {} to {} step {} {{", row.value, first.value,
                            IndexConstant(extent.rows).value, IndexConstant(1).value));
  ++depth_;
  const TileExtent src_row{1, TileRowsCols(*src.type()->As<ir::TileType>()).cols};
  const TypedValue src_view = SubsetView(src, row, first, src_row, src.name_hint() + "_r", span);
  const TypedValue index_view = SubsetView(index, row, first, {1, extent.cols}, index.name_hint() + "_r", span);
  const TypedValue result_view = SubsetView(result, row, first, {1, extent.cols}, result.name_hint() + "_r", span);
  Add(body_, IndexGather(src_view, index_view, tmp, result_view), span);
  --depth_;
  AddStructural("}");
}

// tile.gather_dim of a [B, R, C] source along axis 0 or 1 (Planner::CheckBatchGather): the tiles are
// typed as all their rows, and element (b, i, k) of the result is the source's element at the flat
// position idx * R * C + i * C + k (axis 0) or b * R * C + idx * C + k (axis 1). The offsets apart
// from idx are the same along each row of the indices, so each row of them is one pto.tci; then
// tmuls / tadd make the positions and one tgather reads them, all in three Vec scratch tiles.
void KernelEmitter::LowerBatchGather(const ir::Call& call, const ir::Var& result, const ir::Span& span) {
  const auto& src = *call.args()[0]->As<ir::Var>();
  const auto& index = *call.args()[1]->As<ir::Var>();
  const auto& src_shape = src.type()->As<ir::TileType>()->shape();
  const auto& index_shape = index.type()->As<ir::TileType>()->shape();
  int64_t dim = ir::FindAttr<int64_t>(call.kwargs(), "dim").value_or(-1);
  if (dim < 0) dim += 3;
  const int64_t matrix = src_shape[1] * src_shape[2], rows = index_shape[0] * index_shape[1];
  const int64_t cols = index_shape[2], bytes = rows * cols * 4;
  auto scratch = [&](int slot, TileExtent extent, int64_t offset, const std::string& name) {
    const TypedValue tile{names_.Named(name), TileBufType(ir::MemorySpace::Vec, "i32", extent)};
    const TypedValue addr{names_.Constant(plan_.vec_scratch_offset + slot * bytes + offset, "i64"), "i64"};
    Add(body_, AllocTile(tile, addr, IndexConstant(extent.rows), IndexConstant(extent.cols)), span);
    return tile;
  };
  const std::string stem = result.name_hint();
  const TypedValue flat = scratch(0, {rows, cols}, 0, stem + "_flat");
  const TypedValue base = scratch(1, {rows, cols}, 0, stem + "_base");
  const TypedValue tmp = scratch(2, {rows, cols}, 0, stem + "_tmp");
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t start = dim == 1 ? r / index_shape[1] * matrix : r % index_shape[1] * src_shape[2];
    const TypedValue row = scratch(1, {1, cols}, r * cols * 4, fmt::format("{}_base_{}", stem, r));
    Add(body_, DpsOp("pto.tci", {{names_.Constant(start, "i32"), "i32"}}, row), span);
  }
  const int64_t stride = dim == 1 ? src_shape[2] : matrix;
  Add(body_, DpsOp("pto.tmuls", {TileOperand(index, false), {names_.Constant(stride, "i32"), "i32"}}, flat), span);
  Add(body_, DpsOp("pto.tadd", {flat, base}, flat), span);
  Add(body_, IndexGather(TileOperand(src, false), flat, tmp, TileOperand(result, false)), span);
}

}  // namespace pypto::backend_ptoas
