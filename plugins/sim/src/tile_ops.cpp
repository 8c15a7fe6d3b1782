// TileOpsTarget: the name of the Highway target that dynamic dispatch picks on this host. Compiled
// once per target (foreach_target re-includes this file) so each target reports its own name.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tile_ops.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "tile_ops.h"

HWY_BEFORE_NAMESPACE();
namespace pypto::sim {
namespace HWY_NAMESPACE {

const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace pypto::sim
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace pypto::sim {

HWY_EXPORT(TargetName);

const char* TileOpsTarget() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }

}  // namespace pypto::sim
#endif  // HWY_ONCE
