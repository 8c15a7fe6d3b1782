// The Vec scratch buffer (KernelPlan::vec_scratch_offset): room for the scratch tiles PTO
// instructions need and the IR has no variable for, such as the tmp tile of tgather's index form.
// Memory allocation placed every tile before backend-ptoas runs, at static addresses, so the bytes
// past the highest end of any Vec tile are free for the whole kernel; each op that needs scratch
// uses it only while it runs, so one buffer, as large as the largest need, serves them all.
#include <fmt/format.h>

#include <algorithm>

#include "kernel_planner.h"
#include "pypto/ir/soc.h"

namespace pypto::backend_ptoas::detail {

Status Planner::NeedScratch(int64_t bytes, const ir::Call& call, const ir::Span& span) {
  if (!scratch_user_) {
    scratch_user_ = &call;
    scratch_span_ = span;
  }
  scratch_bytes_ = std::max(scratch_bytes_, bytes);
  return {};
}

Status Planner::PlaceScratch() {
  if (!scratch_user_) return {};
  const ir::SocSpec& soc = *ir::SocForArch(arch_);
  int64_t end = 0;
  for (const auto* assign : plan_.tile_defs) {
    const auto* tile = assign->var()->type()->As<ir::TileType>();
    if (tile->memory_space() == ir::MemorySpace::Vec)
      end = std::max(end, tile->memref()->byte_offset + tile->memref()->size);
  }
  const int64_t alignment = std::max<int64_t>(soc.alignment, 1);
  const int64_t offset = (end + alignment - 1) / alignment * alignment;
  if (offset + scratch_bytes_ > soc.ub_bytes) {
    return Error(scratch_span_,
                 fmt::format("backend-ptoas cannot place the {}-byte scratch tile of '{}' in kernel '{}': its Vec "
                             "tiles use UB up to byte {}, and {}'s UB holds {} bytes; free {} bytes of UB (smaller "
                             "tiles, or fewer alive at once)",
                             scratch_bytes_, scratch_user_->target_name(), kernel_.name(), end, soc.name,
                             soc.ub_bytes, offset + scratch_bytes_ - soc.ub_bytes));
  }
  plan_.vec_scratch_offset = offset;
  return {};
}

}  // namespace pypto::backend_ptoas::detail
