// Windows of an Acc tile that are views of it (KernelPlan::acc_views): memory allocation placed them
// in the tile's own L0C block, so they name its bytes where the slice stands and get no alloc_tile.
//
// L0C holds a tile in NZ fractals, column block after column block, each of all the tile's rows: a
// window of whole rows is contiguous there, a band of rows is strided. PTOAS a56b18c's pto.subset
// views the former (a col-major boxed subset keeps every row, its row offset 0); that is where a
// product accumulates (`win = pl.tile.slice(acc, [M, n], [0, c])`, `pl.matmul_acc(win, ...)`,
// pto.tmatmul.acc writing the view). A band (`acc[r : r + 16, :]`, read out a band at a time) is
// upstream pypto's pto.subview, a later PTOAS's view with a stride, written as upstream's emitter
// writes it (pto-check's table has it under its upstream-emitter source): the view's valid extents
// static, its sizes, which PTOAS infers from a source typed v_row=?, v_col=?.
#include <fmt/format.h>

#include "kernel_emitter.h"
#include "mlir_types.h"

namespace pypto::backend_ptoas {

namespace {

bool IsRowBand(const ir::Var& window, const ir::Var& source) {
  return TileRowsCols(*window.type()->As<ir::TileType>()).rows != TileRowsCols(*source.type()->As<ir::TileType>()).rows;
}

}  // namespace

void KernelEmitter::LowerAccView(const ir::Call& call, const ir::Var& result, const ir::Span& span) {
  const ir::Var& source = *plan_.acc_views.at(&result);
  const auto& origin = call.args()[2]->As<ir::TupleLiteral>()->elements();
  const TypedValue row{IndexValue(origin[0], span), "index"};
  const TypedValue col{IndexValue(origin[1], span), "index"};
  const TypedValue src = TileOperand(source, false);
  const TypedValue view = TileOperand(result, false);
  const TileExtent window = TileRowsCols(*result.type()->As<ir::TileType>());
  const std::string sizes = fmt::format("[{}, {}]", window.rows, window.cols);
  const bool band = IsRowBand(result, source);
  if (!band) {
    Add(body_, SubsetOp(view, src, row, col, sizes), span);
    return;
  }
  PtoOp subview{.name = "pto.subview", .result = view, .attrs = {{"sizes", sizes}}};
  subview.custom_syntax = fmt::format("{} = pto.subview {}[{}, {}] sizes {} : {} -> {}", view.value, src.value,
                                      row.value, col.value, sizes, src.type, view.type);
  subview.generic_operands = GenericOperands{{{src}, {row, col}, {}, {}}, true};
  Add(body_, subview, span);
}

// A band's type: the window's, its valid extents the window's own (static, as PTOAS infers them).
std::string KernelEmitter::AccBandType(const ir::Var& window, std::string type) const {
  const auto view = plan_.acc_views.find(&window);
  if (view == plan_.acc_views.end() || !IsRowBand(window, *view->second)) return type;
  const TileExtent extent = TileRowsCols(*window.type()->As<ir::TileType>());
  const std::string_view dynamic = "v_row=?, v_col=?";
  type.replace(type.find(dynamic), dynamic.size(), fmt::format("v_row={}, v_col={}", extent.rows, extent.cols));
  return type;
}

}  // namespace pypto::backend_ptoas
