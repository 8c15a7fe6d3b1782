// The Planner's checks of tile.mgather and tile.mscatter (kernel_planner.h), the ops that read or
// write a global tensor at per-element indices. Their memory operand is the whole tensor, through a
// partition of all of it (memory_gather_scatter.cpp), so each must be a tensor parameter or a name of
// one; the indices are an INT32 Vec tile, or for a Mat result a tensor too.
#include <fmt/format.h>

#include "kernel_planner.h"

namespace pypto::backend_ptoas::detail {

Status Planner::CheckMemGather(const ir::Call& call, const ir::Span& span) {
  const auto& args = call.args();
  if (auto ok = CheckTensorOperand(args[0], "tile.mgather", span); !ok) return ok;
  const bool into_mat = call.type()->As<ir::TileType>()->memory_space() == ir::MemorySpace::Mat;
  if (!into_mat) return CheckTileOperand(args[1], "tile.mgather", span);
  if (auto ok = CheckTensorOperand(args[1], "tile.mgather", span); !ok) return ok;
  // Element mode into Mat stages the elements through a scratch tensor (a third operand); in row mode
  // a third operand is the valid shape, which the result's type already carries.
  if (args.size() > 2 && args[2]->type()->As<ir::TensorType>())
    return CheckTensorOperand(args[2], "tile.mgather", span);
  return {};
}

Status Planner::CheckMemScatter(const ir::Call& call, const ir::Span& span, const ir::AssignStmt* assign) {
  const auto& args = call.args();
  if (auto ok = CheckTileOperand(args[0], "tile.mscatter", span); !ok) return ok;
  if (auto ok = CheckTileOperand(args[1], "tile.mscatter", span); !ok) return ok;
  if (auto ok = CheckTensorOperand(args[2], "tile.mscatter", span); !ok) return ok;
  // `out2 = tile.mscatter(src, idx, out)` names the same memory as `out`.
  if (assign) plan_.tensor_param_of[assign->var().get()] = plan_.tensor_param_of.at(args[2]->As<ir::Var>());
  return {};
}

}  // namespace pypto::backend_ptoas::detail
