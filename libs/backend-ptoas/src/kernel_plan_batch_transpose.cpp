// The Planner's checks of a batch transpose (kernel_planner.h): tile.transpose of the last two axes of
// a [B, R, C] Vec tile, which FlattenTileNdTo2D leaves rank 3 (it has no 2-D form). PTO tile buffers
// are 2-D, so such a tile is typed as the rows of all its matrices ([B * R, C], the bytes a row-major
// tile has), and the transpose is one pto.ttrans per matrix (batch_transpose.cpp). Only the tiles of
// that pattern may be rank 3: the transpose's result, and a loaded tile that only batch transposes and
// stores read; a store of a rank-3 tile writes its N-d window as a merged tile's does.
#include <fmt/format.h>

#include <set>

#include "kernel_planner.h"
#include "pypto/ir/functor.h"

namespace pypto::backend_ptoas::detail {
namespace {

bool SwapsLastTwoAxes(const ir::Call& call) {
  auto first = ir::FindAttr<int64_t>(call.kwargs(), "axis1");
  auto second = ir::FindAttr<int64_t>(call.kwargs(), "axis2");
  if (!first || !second) return false;
  auto axis = [](int64_t value) { return value < 0 ? value + 3 : value; };
  return std::set<int64_t>{axis(*first), axis(*second)} == std::set<int64_t>{1, 2};
}

bool IsBatchTranspose(const ir::Call& call) {
  if (!call.is_op_call() || call.target_name() != "tile.transpose" || call.args().size() != 1) return false;
  const auto* source = call.args()[0]->type()->As<ir::TileType>();
  return source && source->shape().size() == 3 && SwapsLastTwoAxes(call);
}

// Whether every op that reads `tile` is a batch transpose or a store, and one does.
bool OnlyTransposedOrStored(const ir::Function& kernel, const ir::Var& tile) {
  struct Uses final : ir::IRVisitor {
    const ir::Var* tile = nullptr;
    bool any = false, others = false;
    void VisitCall(const std::shared_ptr<const ir::Call>& call) override {
      for (const auto& arg : call->args()) {
        if (arg->As<ir::Var>() != tile) continue;
        any = true;
        others |= !(IsBatchTranspose(*call) || (call->is_op_call() && call->target_name() == "tile.store"));
      }
      IRVisitor::VisitCall(call);
    }
  } uses;
  uses.tile = &tile;
  if (kernel.body()) uses.VisitStmt(kernel.body());
  return uses.any && !uses.others;
}

}  // namespace

bool Planner::IsBatchTransposeTile(const ir::AssignStmt& assign) const {
  const auto* call = assign.value()->As<ir::Call>();
  const auto* tile = assign.var()->type()->As<ir::TileType>();
  if (!call || tile->shape().size() != 3 || tile->memory_space() != ir::MemorySpace::Vec ||
      tile->has_partial_valid_shape())
    return false;
  if (IsBatchTranspose(*call)) return true;
  return call->is_op_call() && call->target_name() == "tile.load" && OnlyTransposedOrStored(kernel_, *assign.var());
}

Status Planner::CheckBatchTranspose(const ir::Call& call, const ir::Span& span) {
  const auto& source = *call.args()[0]->type()->As<ir::TileType>();
  if (!IsBatchTranspose(call))
    return Error(span, fmt::format("backend-ptoas cannot lower 'tile.transpose' of {} in kernel '{}': of a rank-3 "
                                   "tile it lowers the transpose of the last two axes only, one pto.ttrans per "
                                   "matrix",
                                   source.str(), kernel_.name()));
  const int64_t element = ir::DataTypeBytes(source.dtype());
  const int64_t rows = source.shape()[1], cols = source.shape()[2];
  if ((rows * element) % 32 != 0 || (cols * element) % 32 != 0)
    return Error(span, fmt::format("backend-ptoas cannot lower 'tile.transpose' of {} in kernel '{}': each matrix "
                                   "and its transpose must have rows of whole 32-byte blocks, as ttrans's tiles do "
                                   "(got {} and {} bytes)",
                                   source.str(), kernel_.name(), cols * element, rows * element));
  // ttrans's tmp, like one matrix of the source.
  return NeedScratch(rows * cols * element, call, span);
}

}  // namespace pypto::backend_ptoas::detail
