// The Planner's checks of the gathers by index (kernel_planner.h): tile.gather (flat, row-major
// indices) and tile.gather_dim (torch.gather along the last axis), both pto.tgather's index form.
// What that form takes is PTOAS's verifier's: element and index types by arch, row-major tiles,
// whole index rows, and on a2a3 a tmp tile with the indices' type and valid shape.
#include <fmt/format.h>

#include <string>

#include "kernel_planner.h"
#include "mlir_types.h"
#include "pypto/ir/op_registry.h"

namespace pypto::backend_ptoas::detail {

// What pto.tgather's index form takes of the source, the indices and the result, for either gather.
Status Planner::CheckIndexGather(const ir::Call& call, const ir::Span& span) const {
  const auto& src = *call.args()[0]->type()->As<ir::TileType>();
  const auto& index = *call.args()[1]->type()->As<ir::TileType>();
  auto refuse = [&](const std::string& why) {
    return Error(span, fmt::format("backend-ptoas cannot lower '{}' in kernel '{}': {}", call.target_name(),
                                   kernel_.name(), why));
  };
  for (const auto* tile : {&src, &index, call.type()->As<ir::TileType>()}) {
    if (IsColumnVector(*tile))
      return refuse(fmt::format("the column vector {} is laid out column-major; pto.tgather reads and writes "
                                "row-major tiles",
                                tile->str()));
  }
  const ir::DataType element = src.dtype();
  const bool a5 = arch_ == "a5";
  const int64_t bits = static_cast<int64_t>(ir::DataTypeBits(element));
  const bool element_ok = element == ir::DataType::FP16 || element == ir::DataType::FP32 ||
                          (!ir::IsFloat(element) && (bits == 16 || bits == 32 || (a5 && bits == 8)));
  if (!element_ok) {
    return refuse(fmt::format("pto.tgather on {} gathers {}-bit integers, FP16 and FP32 elements, not {}", arch_,
                              a5 ? "8-, 16- and 32" : "16- and 32", ir::DataTypeName(element)));
  }
  if (!a5 && index.dtype() != ir::DataType::INT32) {
    return refuse(fmt::format("pto.tgather on a2a3 takes INT32 indices, not {} (a5 also takes INT16)",
                              ir::DataTypeName(index.dtype())));
  }
  if (index.has_partial_valid_shape() || call.type()->As<ir::TileType>()->has_partial_valid_shape()) {
    return refuse(fmt::format("the indices {} are partly valid, but pto.tgather gathers whole index rows",
                              index.str()));
  }
  return {};
}

// tile.gather_dim is pto.tgather's index form, row by row (the emitter's LowerGatherDim): its indices
// address a row's elements, so it gathers along the last axis only. Its tmp tile ([1, K] of the
// index type) goes in the Vec scratch.
Status Planner::CheckGatherDim(const ir::Call& call, const ir::Span& span) {
  const auto& src = *call.args()[0]->type()->As<ir::TileType>();
  const auto& index = *call.args()[1]->type()->As<ir::TileType>();
  const auto rank = static_cast<int64_t>(src.shape().size());
  const int64_t dim = ir::FindAttr<int64_t>(call.kwargs(), "dim").value_or(-1);
  if (IsBatchGather(call)) return CheckBatchGather(call, span);
  if (dim != -1 && dim != rank - 1) {
    return Error(span, fmt::format("backend-ptoas cannot lower 'tile.gather_dim' in kernel '{}': it gathers along "
                                   "dim={} of a rank-{} tile, but pto.tgather gathers within rows (along the last "
                                   "axis) only",
                                   kernel_.name(), dim, rank));
  }
  if (auto ok = CheckIndexGather(call, span); !ok) return ok;
  const int64_t tmp_bytes = TileRowsCols(index).cols * ir::DataTypeBytes(index.dtype());
  return NeedScratch(tmp_bytes, call, span);
}

// tile.gather is one pto.tgather: its flat indices are positions among the source's elements,
// row-major, which is how TGATHER reads them. The tmp is the program's when ptoas takes it (on a2a3
// it must have the indices' element type and valid shape; a5 does not read it), else a tile like
// the indices in the Vec scratch: a workspace, so which one is used does not change the result.
Status Planner::CheckGather(const ir::Call& call, const ir::Span& span) {
  if (auto ok = CheckIndexGather(call, span); !ok) return ok;
  const auto& index = *call.args()[1]->type()->As<ir::TileType>();
  if (call.args().size() > 2) {
    const auto& tmp = *call.args()[2]->type()->As<ir::TileType>();
    const TileExtent tmp_extent = TileRowsCols(tmp), index_extent = TileRowsCols(index);
    const bool like_indices = tmp.dtype() == index.dtype() && !tmp.has_partial_valid_shape() &&
                              tmp_extent.rows == index_extent.rows && tmp_extent.cols == index_extent.cols;
    if (arch_ == "a5" || like_indices) return {};
  }
  plan_.scratch_gather_tmps.insert(&call);
  return NeedScratch(index.num_bytes(), call, span);
}

// tile.gather_dim of a [B, R, C] tile along its first or second axis (upstream's rank-3 tensor.gather
// on dim 0 or 1): one pto.tgather of the source's rows through flat indices the emitter computes
// (LowerBatchGather): the index times the axis's stride, plus each position's offset along the
// others. TGATHER's b32 form takes 32-bit sources, as upstream requires here too; the flat indices,
// their offsets and tgather's tmp are three tiles like the indices in the Vec scratch.
Status Planner::CheckBatchGather(const ir::Call& call, const ir::Span& span) {
  const auto& src = *call.args()[0]->type()->As<ir::TileType>();
  const auto& index = *call.args()[1]->type()->As<ir::TileType>();
  auto refuse = [&](const std::string& why) {
    return Error(span, fmt::format("backend-ptoas cannot lower 'tile.gather_dim' of {} in kernel '{}': {}", src.str(),
                                   kernel_.name(), why));
  };
  if (ir::DataTypeBytes(src.dtype()) != 4 || index.dtype() != ir::DataType::INT32 || index.shape().size() != 3)
    return refuse("across the batch it gathers 32-bit elements by a rank-3 INT32 index tile (pto.tgather's b32 form)");
  if (src.has_partial_valid_shape() || index.has_partial_valid_shape())
    return refuse("its tiles are partly valid, but pto.tgather gathers whole rows");
  if ((src.shape()[2] * 4) % 32 != 0 || (index.shape()[2] * 4) % 32 != 0)
    return refuse("the rows of its source and indices must be whole 32-byte blocks");
  return NeedScratch(3 * index.num_bytes(), call, span);
}

}  // namespace pypto::backend_ptoas::detail
