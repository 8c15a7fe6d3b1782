// The Planner's check of the scatters by index (kernel_planner.h): tile.scatter (flat indices),
// tile.scatter_dim along the last axis and tile.scatter_update (whole rows), all pto.tscatter's
// index form into zeros blended with the destination (index_scatter_blend.cpp). What they take is
// what PTOAS verifies of tscatter, tcmps and tsel, and the range of the INT16 indices that tscatter
// reads for 2-byte elements, which upstream pypto checks too.
#include <fmt/format.h>

#include <string>

#include "index_scatter_layout.h"
#include "kernel_planner.h"

namespace pypto::backend_ptoas {

IndexScatterLayout IndexScatterLayout::Of(const ir::Call& call) {
  const bool flat = call.target_name() == "tile.scatter";
  const auto& input = *call.args()[0]->type()->As<ir::TileType>();
  const auto& src = *call.args()[flat ? 1 : 2]->type()->As<ir::TileType>();
  IndexScatterLayout layout;
  layout.input = TileRowsCols(input);
  layout.src = TileRowsCols(src);
  const int64_t bytes = ir::DataTypeBytes(input.dtype());
  layout.index = bytes == 4 ? ir::DataType::INT32 : ir::DataType::INT16;
  layout.mask = bytes == 4 ? ir::DataType::FP32 : bytes == 2 ? ir::DataType::FP16 : ir::DataType::INT8;
  // tcmps packs one predicate bit per element, each row padded to 32 bytes (tile_compare_ops.cpp).
  layout.pred_cols = ((layout.input.cols + 7) / 8 + 31) / 32 * 32;
  int64_t at = 0;
  auto place = [&](int64_t size) {
    const int64_t offset = at;
    at += (size + 31) / 32 * 32;
    return offset;
  };
  layout.values = place(layout.input.rows * layout.input.cols * bytes);
  layout.mask_at = place(layout.input.rows * layout.input.cols * bytes);
  layout.ones = place(layout.src.rows * layout.src.cols * bytes);
  layout.flat = flat ? -1 : place(layout.src.rows * layout.src.cols * (bytes == 4 ? 4 : 2));
  layout.pred = place(layout.input.rows * layout.pred_cols);
  layout.tmp = place(32);  // tsel's scratch: one 32-byte block
  layout.bytes = at;
  return layout;
}

namespace detail {

Status Planner::CheckIndexScatter(const ir::Call& call, const ir::Span& span) {
  const std::string& op = call.target_name();
  for (const auto& arg : call.args())
    if (auto ok = CheckTileOperand(arg, op, span); !ok) return ok;
  const auto& input = *call.args()[0]->type()->As<ir::TileType>();
  auto refuse = [&](const std::string& why) {
    return Error(span, fmt::format("backend-ptoas cannot lower '{}' into {} in kernel '{}': {}", op, input.str(),
                                   kernel_.name(), why));
  };
  for (const auto& arg : call.args()) {
    const auto& tile = *arg->type()->As<ir::TileType>();
    if (tile.shape().size() != 2)
      return refuse(fmt::format("pto.tscatter scatters between 2-D tiles, and {} is not one", tile.str()));
    if (IsColumnVector(tile))
      return refuse(fmt::format("the column vector {} is laid out column-major; pto.tscatter reads and writes "
                                "row-major tiles",
                                tile.str()));
    if (tile.has_partial_valid_shape())
      return refuse(fmt::format("{} is partly valid, but the scatter is blended with the whole destination",
                                tile.str()));
  }
  if (op == "tile.scatter_dim") {
    const int64_t dim = ir::FindAttr<int64_t>(call.kwargs(), "dim").value_or(-1);
    if (dim != -1 && dim != 1)
      return refuse(fmt::format("it scatters along dim={}, but the flat indices are built along the last axis "
                                "only (dim=-1), as upstream pypto lowers it",
                                dim));
  }
  const int64_t bits = static_cast<int64_t>(ir::DataTypeBits(input.dtype()));
  if (bits == 8 && arch_ != "a5")
    return refuse(fmt::format("pto.tsel on {} selects 16- and 32-bit elements, not {}; scatter a 16- or 32-bit "
                              "tile",
                              arch_, ir::DataTypeName(input.dtype())));
  const IndexScatterLayout layout = IndexScatterLayout::Of(call);
  const int64_t last = layout.input.rows * layout.input.cols - 1;
  if (bits < 32 && last > 32767)
    return refuse(fmt::format("pto.tscatter takes INT16 indices for {}-bit elements, and the flat index of its "
                              "last element, {}, is past INT16's 32767; scatter into at most 32768 elements "
                              "(fewer rows at a time) or use a 4-byte dtype",
                              bits, last));
  return NeedScratch(layout.bytes, call, span);
}

}  // namespace detail
}  // namespace pypto::backend_ptoas
