// tile.transpose of the last two axes of a [B, R, C] Vec tile (the planner's batch transpose,
// kernel_plan_batch_transpose.cpp): the source is typed as [B * R, C] and the result as [B * C, R],
// so matrix b of each is the band of rows at b * R * C elements from its start. Each band gets an
// alloc_tile of one matrix at that address, and one pto.ttrans per matrix transposes the source's band
// into the result's, through a tmp like one source matrix in the Vec scratch:
//
//   %t_0 = pto.alloc_tile addr = %c0_i64 ... : !pto.tile_buf<.., rows=24, cols=8, ..>
//   %r_0 = pto.alloc_tile addr = %c3072_i64 ... : !pto.tile_buf<.., rows=8, cols=24, ..>
//   pto.ttrans ins(%t_0, %r_tmp : S, S) outs(%r_0 : D)
#include <fmt/format.h>

#include "kernel_emitter.h"
#include "mlir_types.h"

namespace pypto::backend_ptoas {

void KernelEmitter::LowerBatchTranspose(const ir::Call& call, const ir::Var& result, const ir::Span& span) {
  const auto& source = *call.args()[0]->As<ir::Var>();
  const auto& source_type = *source.type()->As<ir::TileType>();
  const auto& result_type = *result.type()->As<ir::TileType>();
  const int64_t batch = source_type.shape()[0], rows = source_type.shape()[1], cols = source_type.shape()[2];
  const std::string element = ElementOf(source_type.dtype());
  const int64_t matrix_bytes = rows * cols * ir::DataTypeBytes(source_type.dtype());
  auto matrix = [&](const ir::Var& tile, const ir::TileType& type, int64_t b, TileExtent extent) {
    const TypedValue view{names_.Named(fmt::format("{}_{}", tile.name_hint(), b)),
                          TileBufType(ir::MemorySpace::Vec, element, extent)};
    const TypedValue addr{names_.Constant(type.memref()->byte_offset + b * matrix_bytes, "i64"), "i64"};
    Add(body_, AllocTile(view, addr, IndexConstant(extent.rows), IndexConstant(extent.cols)), span);
    return view;
  };
  const TypedValue tmp = ScratchTile(result.name_hint() + "_tmp", element, {rows, cols}, span);
  for (int64_t b = 0; b < batch; ++b) {
    const TypedValue in = matrix(source, source_type, b, {rows, cols});
    const TypedValue out = matrix(result, result_type, b, {cols, rows});
    Add(body_, DpsOp("pto.ttrans", {in, tmp}, out), span);
  }
}

}  // namespace pypto::backend_ptoas
