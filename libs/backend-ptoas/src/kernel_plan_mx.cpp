// What the planner checks and records for MX block-scale matmul (mx_ops.cpp lowers it): scale tiles
// loaded into Mat from an MX_A_ZZ / MX_B_NN tensor (typed in that layout's scale boxes), their moves
// into the LeftScale / RightScale buffers, and the products that read them.
#include <fmt/format.h>

#include "kernel_planner.h"
#include "mlir_types.h"

namespace pypto::backend_ptoas::detail {

namespace {

bool IsScaleBuffer(ir::MemorySpace space) {
  return space == ir::MemorySpace::LeftScale || space == ir::MemorySpace::RightScale;
}

// The tensor layout a scale buffer's tiles come from.
ir::TensorLayout ScaleLayoutOf(ir::MemorySpace space) {
  return space == ir::MemorySpace::LeftScale ? ir::TensorLayout::MX_A_ZZ : ir::TensorLayout::MX_B_NN;
}

}  // namespace

Status Planner::CheckMx(const OpLowering& lowering, const ir::Call& call, const ir::AssignStmt& assign,
                        const ir::Span& span) {
  const auto& args = call.args();
  const ir::Var& result = *assign.var();
  if (lowering.form == OpForm::Load) {
    const auto& tensor = *plan_.tensor_param_of.at(args[0]->As<ir::Var>())->type()->As<ir::TensorType>();
    if (tensor.layout() != ir::TensorLayout::ND) plan_.mx_scale_mats[&result] = tensor.layout();
    return {};
  }
  if (lowering.form == OpForm::Move) {
    const ir::MemorySpace to = result.type()->As<ir::TileType>()->memory_space();
    if (!IsScaleBuffer(to)) return {};
    const auto* source = args[0]->As<ir::Var>();
    auto loaded = plan_.mx_scale_mats.find(RootTile(*source));
    if (loaded != plan_.mx_scale_mats.end() && loaded->second == ScaleLayoutOf(to)) return {};
    return Error(span, fmt::format("backend-ptoas cannot move '{}' into {} in kernel '{}': ptoas fills a scale "
                                   "buffer from a Mat tile in its scale layout, so load '{}' straight into Mat "
                                   "from a {} tensor (pl.load(t, ..., target_memory=pl.Mem.Mat))",
                                   source->name_hint(), ir::MemorySpaceName(to), kernel_.name(),
                                   source->name_hint(), ir::TensorLayoutName(ScaleLayoutOf(to))));
  }
  if (lowering.form == OpForm::MatmulMx && call.target_name() == "tile.matmul_mx_acc")
    return CheckSameBuffer(call, *args[0]->As<ir::Var>(), result, "accumulator", span);
  return {};
}

}  // namespace pypto::backend_ptoas::detail
