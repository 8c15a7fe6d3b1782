// The scatters by index as pto.tscatter's index form, PTOAS's own: `pto.tscatter ins(%src, %indexes
// : S, I) outs(%dst : D)` writes dst.flat[indexes[i, j]] = src[i, j], indexes counting dst's elements
// row-major. The IR's scatters keep every element of their destination they do not write, and the
// instruction leaves those as they were in outs; upstream pypto (e2d0f78ae, op_conversion_registry.cpp:
// tensor.scatter, tensor.scatter_update) does not rely on that, and writes the scatter into zeros and
// blends it with the destination, which this backend does the same way:
//
//     values = 0;  tscatter(src, flat) -> values       # src where written, 0 elsewhere
//     mask   = 0;  tscatter(ones, flat) -> mask        # 1 where written
//     pred   = tcmps(mask, 0, ne)                      # the packed predicate of the written elements
//     result = tsel(pred, values, input, tmp)          # written from src, the rest from input
//
// The flat indices are the program's for tile.scatter; for tile.scatter_dim along the last axis,
// row r's indices plus r * C (a tadds per row); for tile.scatter_update, row k of [b * s, d] holds
// index.flat[k] * d + c (a tci per row from the index read with tgetval). The rows go one at a time
// in an scf.for through pto.subset views. Every tile the expansion needs is in the Vec scratch
// (Planner::CheckIndexScatter sizes it); the result is written last, by tsel, so it may share the
// input's buffer. A BF16 or unsigned element is moved as the signless integer of its width: scatter
// and select only move bits, and a2a3's tsel takes no BF16.
#include <fmt/format.h>

#include "index_scatter_layout.h"
#include "kernel_emitter.h"
#include "mlir_types.h"

namespace pypto::backend_ptoas {
namespace {

// What the blend moves each element as: the element itself where tscatter and a2a3's tsel take it.
ir::DataType MovedDtype(ir::DataType dtype) {
  switch (dtype) {
    case ir::DataType::FP16:
    case ir::DataType::FP32:
    case ir::DataType::INT16:
    case ir::DataType::INT32:
    case ir::DataType::INT8: return dtype;
    default: break;
  }
  const auto bits = ir::DataTypeBits(dtype);
  return bits == 32 ? ir::DataType::INT32 : bits == 16 ? ir::DataType::INT16 : ir::DataType::INT8;
}

}  // namespace

// A [rows, cols] Vec tile of `element` at byte `offset` of the scratch.
TypedValue KernelEmitter::ScratchAt(const std::string& name, std::string_view element, TileExtent extent,
                                    int64_t offset, const ir::Span& span) {
  const TypedValue tile{names_.Named(name), TileBufType(ir::MemorySpace::Vec, element, extent)};
  const TypedValue addr{names_.Constant(plan_.vec_scratch_offset + offset, "i64"), "i64"};
  Add(body_, AllocTile(tile, addr, IndexConstant(extent.rows), IndexConstant(extent.cols)), span);
  return tile;
}

// `tile` itself, or a second alloc_tile of its bytes typed as `element` where the blend moves it so.
TypedValue KernelEmitter::TileAs(const ir::Var& tile, ir::DataType element, const ir::Span& span) {
  const auto& type = *tile.type()->As<ir::TileType>();
  if (type.dtype() == element) return TileOperand(tile, false);
  const TileExtent extent = TileRowsCols(type);
  const TypedValue view{names_.Named(fmt::format("{}_{}", tile.name_hint(), ElementOf(element))),
                        TileBufType(ir::MemorySpace::Vec, ElementOf(element), extent)};
  const TypedValue addr{names_.Constant(type.memref()->byte_offset, "i64"), "i64"};
  Add(body_, AllocTile(view, addr, IndexConstant(extent.rows), IndexConstant(extent.cols)), span);
  return view;
}

// `%<name> = pto.subset %tile[%row, %c0] sizes [1, C]`: row `row` of a row-major Vec tile.
TypedValue KernelEmitter::RowOf(const TypedValue& tile, std::string_view element, TileExtent extent,
                                const TypedValue& row, const std::string& name, const ir::Span& span) {
  const TypedValue view{names_.Named(name), TileBufType(ir::MemorySpace::Vec, element, {1, extent.cols},
                                                        ImplicitTileLayout(ir::MemorySpace::Vec, extent), 0)};
  const std::string sizes = fmt::format("[1, {}]", extent.cols);
  const TypedValue col = IndexConstant(0);
  Add(body_, SubsetOp(view, tile, row, col, sizes), span);
  return view;
}

// The flat indices of tile.scatter_dim (row r: index + r * C) or tile.scatter_update (row k:
// index.flat[k] * d + c), one row per iteration of an scf.for.
TypedValue KernelEmitter::FlatScatterIndices(const ir::Call& call, const IndexScatterLayout& layout,
                                             const std::string& stem, const ir::Span& span) {
  const std::string element = ElementOf(layout.index);
  const TypedValue flat = ScratchAt(stem + "_flat", element, layout.src, layout.flat, span);
  const TypedValue row{names_.Named(stem + "_row"), "index"};
  AddStructural(fmt::format("scf.for {} = {} to {} step {} {{", row.value, IndexConstant(0).value,
                            IndexConstant(layout.src.rows).value, IndexConstant(1).value));
  ++depth_;
  const TypedValue flat_row = RowOf(flat, element, layout.src, row, stem + "_flat_r", span);
  const auto& index = *call.args()[1]->As<ir::Var>();
  if (call.target_name() == "tile.scatter_dim") {
    const TypedValue index_row = RowOf(TileOperand(index, false), element, layout.src, row, stem + "_index_r", span);
    const std::string base = Arith("arith.muli", row.value, IndexConstant(layout.input.cols).value, span);
    const TypedValue start{names_.Temp(), element};
    Add(body_, fmt::format("{} = arith.index_cast {} : index to {}", start.value, base, element), span);
    Add(body_, DpsOp("pto.tadds", {index_row, start}, flat_row), span);
  } else {
    // The index [b, s] is row-major with s columns, so its k-th element is at flat offset k.
    const auto& index_type = *index.type()->As<ir::TileType>();
    const std::string read_element = ElementOf(index_type.dtype());
    const TypedValue source = TileOperand(index, false);
    const TypedValue raw{names_.Temp(), read_element};
    PtoOp read{.name = "pto.tgetval", .result = raw};
    read.custom_syntax = fmt::format("{} = pto.tgetval ins({}, {} : {}, index) outs : {}", raw.value, source.value,
                                     row.value, source.type, read_element);
    read.generic_operands = GenericOperands{{{source}, {row}}};
    Add(body_, read, span);
    const std::string value = names_.Temp();
    Add(body_, fmt::format("{} = arith.index_cast {} : {} to index", value, raw.value, read_element), span);
    const std::string base = Arith("arith.muli", value, IndexConstant(layout.input.cols).value, span);
    const TypedValue start{names_.Temp(), element};
    Add(body_, fmt::format("{} = arith.index_cast {} : index to {}", start.value, base, element), span);
    Add(body_, DpsOp("pto.tci", {start}, flat_row), span);
  }
  --depth_;
  AddStructural("}");
  return flat;
}

void KernelEmitter::LowerIndexScatter(const ir::Call& call, const ir::Var& result, const ir::Span& span) {
  const IndexScatterLayout layout = IndexScatterLayout::Of(call);
  const bool flat_form = call.target_name() == "tile.scatter";
  const auto& input = *call.args()[0]->As<ir::Var>();
  const auto& src = *call.args()[flat_form ? 1 : 2]->As<ir::Var>();
  const std::string stem = result.name_hint();
  const TypedValue indexes =
      flat_form ? TileOperand(*call.args()[2]->As<ir::Var>(), false) : FlatScatterIndices(call, layout, stem, span);
  const ir::DataType moved = MovedDtype(input.type()->As<ir::TileType>()->dtype());
  const std::string element = ElementOf(moved), mask_element = ElementOf(layout.mask);
  auto literal = [&](ir::DataType dtype, double value) -> TypedValue {
    if (ir::IsFloat(dtype)) return ScalarOperand(std::make_shared<ir::ConstFloat>(value, dtype), dtype, span);
    return ScalarOperand(std::make_shared<ir::ConstInt>(static_cast<int64_t>(value), dtype), dtype, span);
  };
  // src's elements written into zeros.
  const TypedValue values = ScratchAt(stem + "_values", element, layout.input, layout.values, span);
  Add(body_, DpsOp("pto.texpands", {literal(moved, 0.0)}, values), span);
  Add(body_, DpsOp("pto.tscatter", {TileAs(src, moved, span), indexes}, values), span);
  // Ones at the same positions, and their predicate.
  const TypedValue mask = ScratchAt(stem + "_mask", mask_element, layout.input, layout.mask_at, span);
  const TypedValue ones = ScratchAt(stem + "_ones", mask_element, layout.src, layout.ones, span);
  Add(body_, DpsOp("pto.texpands", {literal(layout.mask, 0.0)}, mask), span);
  Add(body_, DpsOp("pto.texpands", {literal(layout.mask, 1.0)}, ones), span);
  Add(body_, DpsOp("pto.tscatter", {ones, indexes}, mask), span);
  const TypedValue pred = ScratchAt(stem + "_pred", ElementOf(ir::DataType::UINT8), {layout.input.rows, layout.pred_cols}, layout.pred, span);
  PtoOp compare = DpsOp("pto.tcmps", {mask, literal(layout.mask, 0.0)}, pred);
  compare.attrs = {{"cmpMode", "#pto<cmp ne>"}};
  compare.attr_placement = AttrPlacement::InIns;
  Add(body_, compare, span);
  // The written elements from values, the others from the input.
  const TypedValue tmp = ScratchAt(stem + "_sel_tmp", ElementOf(ir::DataType::UINT8), {1, 32}, layout.tmp, span);
  Add(body_, DpsOp("pto.tsel", {pred, values, TileAs(input, moved, span), tmp}, TileAs(result, moved, span)), span);
}

}  // namespace pypto::backend_ptoas
