// The gathers by index as pto.tgather's index form. TGATHER reads its indices as positions among the
// source's elements, row-major: tile.gather's flat indices are exactly that, one tgather. For
// tile.gather_dim (torch.gather along the last axis) a column index is such a position within one
// row: a one-row gather is one tgather, and a taller one an scf.for over the index's rows, each
// gathering the source's row into the result's row through pto.subset views (upstream lowers it per
// row the same way on a2a3). A tmp tile the program does not give is an alloc_tile in the kernel's
// Vec scratch (KernelPlan::vec_scratch_offset).
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

}  // namespace pypto::backend_ptoas
