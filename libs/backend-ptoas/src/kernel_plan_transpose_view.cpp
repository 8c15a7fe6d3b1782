// tile.transpose_view: a Mat tile read transposed without moving it (upstream's zero-copy view of a
// matmul operand). The NZ bytes of an [N, K] Mat tile are the ZN bytes of its [K, N] transpose, so the
// view is a second alloc_tile at the source's address, typed [K, N] in the ZN layout, and a tmov or
// textract from it into Right reads the transpose, as the b_trans=True path does.
//
// Memory allocation gives the view a buffer of its own (its value is a copy on the simulators) and
// may hand the source's bytes to another tile once the view is made. The view reads those bytes for
// as long as it is used, so it is lowered only where no other Mat tile of the kernel is placed in
// them; otherwise the error names the tile that is, and the fix.
#include <fmt/format.h>

#include "kernel_planner.h"

namespace pypto::backend_ptoas::detail {

Status Planner::CheckTransposeView(const ir::Call& call, const ir::Var& result, const ir::Span& span) {
  const ir::Var& source = *call.args()[0]->As<ir::Var>();
  const auto* tile = source.type()->As<ir::TileType>();
  if (tile->memory_space() != ir::MemorySpace::Mat) {
    return Error(span, fmt::format("backend-ptoas lowers 'tile.transpose_view' of a Mat tile only (on a device it "
                                   "reads the tile's fractal layout transposed), but '{}' in kernel '{}' lives in "
                                   "{}; transpose it with pl.transpose",
                                   source.name_hint(), kernel_.name(), ir::MemorySpaceName(tile->memory_space())));
  }
  plan_.zn_views[&result] = RootTile(source);
  zn_view_spans_[&result] = span;
  return {};
}

Status Planner::CheckTransposeViewSources() const {
  for (const auto& [view, source] : plan_.zn_views) {
    const auto& bytes = *source->type()->As<ir::TileType>()->memref();
    for (const auto* assign : plan_.tile_defs) {
      const ir::Var* other = assign->var().get();
      if (other == source || other == view) continue;
      if (auto it = plan_.zn_views.find(other); it != plan_.zn_views.end() && it->second == source) continue;
      const auto* type = other->type()->As<ir::TileType>();
      if (type->memory_space() != ir::MemorySpace::Mat) continue;
      const auto& place = *type->memref();
      if (place.byte_offset >= bytes.byte_offset + bytes.size || bytes.byte_offset >= place.byte_offset + place.size)
        continue;
      return Error(zn_view_spans_.at(view),
                   fmt::format("backend-ptoas cannot lower 'tile.transpose_view' of '{}' in kernel '{}': on a device "
                               "the view '{}' reads the bytes of '{}' (Mat {}..{}), and memory allocation places "
                               "'{}' in them too; write the matmul as pl.matmul(a, b, b_trans=True) of the "
                               "untransposed tile instead",
                               source->name_hint(), kernel_.name(), view->name_hint(), source->name_hint(),
                               bytes.byte_offset, bytes.byte_offset + bytes.size, other->name_hint()));
    }
  }
  return {};
}

}  // namespace pypto::backend_ptoas::detail
