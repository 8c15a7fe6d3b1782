// tile.paged_gather: rows of a paged pool, each at a logical row the indices tensor holds, translated
// through the block table. Upstream pypto (e2d0f78ae, op_conversion_registry.cpp's "Paged gather
// lowering") expands it before codegen into a loop that reads both tables element by element and
// loads each row from GM straight into its row of the result (tile.gather_row, no tmov); this
// backend writes the same loop:
//
//   scf.for %i = 0 to n {                                 n: the indices' length, static or not
//     l     = indices[i]                                  pto.load_scalar
//     phys  = block_table[l // block_size] * block_size + l % block_size
//     pto.tload ins(src[phys, col_off : 1 x size]) outs(row i of the result)
//   }
//
// The row of a Vec result is a pto.subset view, PTOAS a56b18c's own. A Mat result is boxed (NZ), and
// a56b18c's subset cannot carve a row out of it; upstream writes pto.subview, a later PTOAS's op, with
// a box-aligned [16, size] extent of which [1, size] is valid, and so does this backend (pto-check's
// table records that form under its upstream-emitter source).
#include <fmt/format.h>

#include "kernel_emitter.h"
#include "pypto/ir/dynamic_extent.h"
#include "mlir_types.h"

namespace pypto::backend_ptoas {

// `pto.load_scalar %ptr[%offset]` of an INT32 table, as an index value named after `name`.
std::string KernelEmitter::LoadTableEntry(const ir::Var& table, const std::string& offset, const std::string& name,
                                          const ir::Span& span) {
  const ir::Var& param = *plan_.tensor_param_of.at(&table);
  const TypedValue raw{names_.Temp(), "i32"};
  const TypedValue pointer{values_.at(&param), PtrType("i32")};
  PtoOp load{.name = "pto.load_scalar", .result = raw};
  load.custom_syntax =
      fmt::format("{} = pto.load_scalar {}[{}] : {} -> i32", raw.value, pointer.value, offset, pointer.type);
  load.generic_operands = GenericOperands{{{pointer}, {{offset, "index"}}}};
  Add(body_, load, span);
  std::string value = names_.Named(name);
  Add(body_, fmt::format("{} = arith.index_cast {} : i32 to index", value, raw.value), span);
  return value;
}

// Row `row` of a Mat result, as upstream writes it: `pto.subview %r[%row, %c0] sizes [16, C] valid
// [%c1, %cC] : R -> V`, V the result's layout at the box-aligned extent.
TypedValue KernelEmitter::MatRowView(const ir::Var& result, const TypedValue& row, int64_t cols,
                                     const ir::Span& span) {
  const auto& type = *result.type()->As<ir::TileType>();
  const TileExtent extent = TileRowsCols(type);
  constexpr int64_t kBoxRows = 16;  // an NZ box is 16 rows of 32 bytes
  const int64_t box_cols = 32 / static_cast<int64_t>(ir::DataTypeBytes(type.dtype()));
  const TileExtent window{kBoxRows, (cols + box_cols - 1) / box_cols * box_cols};
  const TypedValue source = TileOperand(result, false);
  const TypedValue view{names_.Named(result.name_hint() + "_row"),
                        TileBufType(ir::MemorySpace::Mat, ElementOf(type.dtype()), window,
                                    ImplicitTileLayout(ir::MemorySpace::Mat, extent), 0)};
  const std::string sizes = fmt::format("[{}, {}]", window.rows, window.cols);
  const TypedValue col = IndexConstant(0), valid_rows = IndexConstant(1), valid_cols = IndexConstant(cols);
  PtoOp subview{.name = "pto.subview", .result = view, .attrs = {{"sizes", sizes}}};
  subview.custom_syntax = fmt::format("{} = pto.subview {}[{}, {}] sizes {} valid [{}, {}] : {} -> {}", view.value,
                                      source.value, row.value, col.value, sizes, valid_rows.value, valid_cols.value,
                                      source.type, view.type);
  subview.generic_operands = GenericOperands{{{source}, {row, col}, {valid_rows}, {valid_cols}}, true};
  Add(body_, subview, span);
  return view;
}

void KernelEmitter::LowerPagedGather(const ir::Call& call, const ir::Var& result, const ir::Span& span) {
  const auto& args = call.args();
  const auto& src = *args[0]->As<ir::Var>();
  const auto& indices = *args[1]->As<ir::Var>();
  const auto& table = *args[2]->As<ir::Var>();
  const int64_t block_size = *ir::FindAttr<int64_t>(call.kwargs(), "block_size");
  const int64_t size = *ir::FindAttr<int64_t>(call.kwargs(), "size");
  const int64_t col_off = ir::FindAttr<int64_t>(call.kwargs(), "col_off").value_or(0);
  // As many rows as there are indices: a dynamic length is the kernel's extent argument for that axis.
  const auto& index_shape = indices.type()->As<ir::TensorType>()->shape();
  const std::string rows = index_shape.back() == ir::kDynamicExtent
                               ? extent_args_.at({plan_.tensor_param_of.at(&indices), index_shape.size() - 1})
                               : IndexConstant(index_shape.back()).value;
  const auto& type = *result.type()->As<ir::TileType>();
  const std::string stem = result.name_hint();
  const TypedValue i{names_.Named(stem + "_i"), "index"};
  AddStructural(fmt::format("scf.for {} = {} to {} step {} {{", i.value, IndexConstant(0).value, rows,
                            IndexConstant(1).value));
  ++depth_;
  // The tables are [n] or [1, n], dense: element k is at offset k.
  const std::string logical = LoadTableEntry(indices, i.value, stem + "_logical", span);
  const std::string bs = IndexConstant(block_size).value;
  const std::string block = Arith("arith.floordivsi", logical, bs, span);
  const std::string within = Arith("arith.subi", logical, Arith("arith.muli", block, bs, span), span);
  const std::string page = LoadTableEntry(table, block, stem + "_page", span);
  const std::string phys = Arith("arith.addi", Arith("arith.muli", page, bs, span), within, span);
  const ir::Var& pool = *plan_.tensor_param_of.at(&src);
  const std::string element = ElementOf(type.dtype());
  const TypedValue view{views_.at(&pool), TensorViewType(2, element)};
  const std::string partition_type = PartitionViewType({1, size}, element);
  const TypedValue window{
      PartitionViewAt(view, pool.name_hint(), {phys, IndexConstant(col_off).value}, {1, size}, partition_type, span),
      partition_type};
  const TypedValue row = type.memory_space() == ir::MemorySpace::Mat
                             ? MatRowView(result, i, size, span)
                             : SubsetView(result, i, IndexConstant(0), {1, size}, stem + "_row", span);
  Add(body_, DpsOp("pto.tload", {window}, row), span);
  --depth_;
  AddStructural("}");
}

}  // namespace pypto::backend_ptoas
