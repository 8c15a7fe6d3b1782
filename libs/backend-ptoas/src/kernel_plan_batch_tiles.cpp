// Which rank-3 tiles backend-ptoas prints (kernel_planner.h). FlattenTileNdTo2D leaves a [B, R, C]
// tile rank 3 where an op on it has no 2-D form; PTO tile buffers are 2-D, so the tiles of the ops
// lowered per matrix or through flat indices are typed as the rows of all their matrices ([B * R, C],
// the bytes a row-major tile has): a batch transpose's (kernel_plan_batch_transpose.cpp), a gather
// across the batch's (kernel_plan_gather.cpp), and a loaded tile that only such ops and stores read.
// Loads and stores keep their N-d windows, as for merged tiles.
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

bool OfRank3(const ir::ExprPtr& arg) {
  const auto* tile = arg->type()->As<ir::TileType>();
  return tile && tile->shape().size() == 3;
}

// Whether every op that reads `tile` is a batch op or a store, and one does.
bool OnlyBatchOpsOrStores(const ir::Function& kernel, const ir::Var& tile) {
  struct Uses final : ir::IRVisitor {
    const ir::Var* tile = nullptr;
    bool any = false, others = false;
    void VisitCall(const std::shared_ptr<const ir::Call>& call) override {
      for (const auto& arg : call->args()) {
        if (arg->As<ir::Var>() != tile) continue;
        any = true;
        others |= !(IsBatchOp(*call) || (call->is_op_call() && call->target_name() == "tile.store"));
      }
      IRVisitor::VisitCall(call);
    }
  } uses;
  uses.tile = &tile;
  if (kernel.body()) uses.VisitStmt(kernel.body());
  return uses.any && !uses.others;
}

}  // namespace

bool IsBatchTranspose(const ir::Call& call) {
  return call.is_op_call() && call.target_name() == "tile.transpose" && call.args().size() == 1 &&
         OfRank3(call.args()[0]) && SwapsLastTwoAxes(call);
}

bool IsBatchGather(const ir::Call& call) {
  if (!call.is_op_call() || call.target_name() != "tile.gather_dim" || !OfRank3(call.args()[0])) return false;
  const int64_t dim = ir::FindAttr<int64_t>(call.kwargs(), "dim").value_or(-1);
  return dim == 0 || dim == 1 || dim == -3 || dim == -2;
}

bool IsBatchOp(const ir::Call& call) { return IsBatchTranspose(call) || IsBatchGather(call); }

bool Planner::IsBatchTile(const ir::AssignStmt& assign) const {
  const auto* call = assign.value()->As<ir::Call>();
  const auto* tile = assign.var()->type()->As<ir::TileType>();
  if (!call || tile->shape().size() != 3 || tile->memory_space() != ir::MemorySpace::Vec ||
      tile->has_partial_valid_shape())
    return false;
  if (IsBatchOp(*call)) return true;
  return call->is_op_call() && call->target_name() == "tile.load" && OnlyBatchOpsOrStores(kernel_, *assign.var());
}

}  // namespace pypto::backend_ptoas::detail
