// tile.scatter_mask: the device writes it with the mask form of pto.tscatter, which fills the lanes
// the pattern does not select with zeros, where the IR keeps the destination's. The two agree only
// when the destination is a tile of zeros, so that is the one scatter lowered here: into a tile.full
// of a literal zero. The ScatterMaskBlend pass rewrites every other scatter into one of these and a
// select; a kernel that did not go through it is refused, naming the pass.
#include <fmt/format.h>

#include "kernel_planner.h"

namespace pypto::backend_ptoas::detail {
namespace {

bool IsZeroLiteral(const ir::ExprPtr& value) {
  if (const auto* f = value->As<ir::ConstFloat>()) return f->value() == 0.0;
  if (const auto* i = value->As<ir::ConstInt>()) return i->value() == 0;
  return false;
}

}  // namespace

Status Planner::CheckZeroedDestination(const ir::Call& call, const ir::Span& span) const {
  const auto* dst = call.args()[0]->As<ir::Var>();
  for (const auto* assign : plan_.tile_defs) {
    if (!dst || assign->var().get() != dst) continue;
    const auto* fill = assign->value()->As<ir::Call>();
    if (fill && fill->target_name() == "tile.full" && IsZeroLiteral(fill->args()[1])) return {};
  }
  return Error(span, fmt::format("backend-ptoas lowers 'tile.scatter_mask' in kernel '{}' only into a tile.full of "
                                 "zero: pto.tscatter's mask form zeroes the lanes it does not write, where the IR "
                                 "keeps the destination's; lower the program through the ScatterMaskBlend pass, "
                                 "which blends the scatter with its destination",
                                 kernel_.name()));
}

}  // namespace pypto::backend_ptoas::detail
