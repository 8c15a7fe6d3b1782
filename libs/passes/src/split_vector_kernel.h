// Splitting an AIV kernel between the two vector lanes of its core group: a kernel that shares a
// cube tile with its peer lane over a split pipe works on half of every tile.
#pragma once

#include "pypto/ir/diagnostic.h"
#include "pypto/ir/function.h"

namespace pypto::passes {

// bool: a kernel of pl.split_aiv regions, whose vector work is written for one lane's halves already
// (its pipes may split each tile its own way); SplitVectorKernel leaves it as it is.
inline constexpr const char* kSplitAivAttr = "split_aiv";

// The split code a kernel's `split` attribute declares (pl.SplitMode.UP_DOWN: 1, LEFT_RIGHT: 2), 0 for
// none. The pipes ExpandMixedKernel makes between the members of such a mixed kernel are split so.
int64_t DeclaredSplitCode(const ir::Function& kernel);

// An AIC or AIV kernel is split when its `split` attribute (pl.SplitMode.UP_DOWN / LEFT_RIGHT) or the
// `split=` code of its pipe ops (1/3 up-down, 2/4 left-right) says so; all of them must agree. A split
// AIV kernel runs on both lanes (attribute dual_aiv_dispatch), lane pl.tile.get_subblock_idx() holding
// the first (0) or second (1) half of each tile along the split axis (rows for up-down, columns for
// left-right), the half rounded up:
//  - a tile popped from the cube, a tile loaded, created or filled, and every tile computed from
//    those is halved; its valid region along the split axis becomes the lane's part of it,
//    clamp(valid - lane * half, 0, half);
//  - a load reads, and a store of a halved tile writes, the lane's part of the global region (the
//    offset along the split axis moves by lane * half);
//  - pl.tile.set_validshape of the whole extent (or of more than a half) is the lane's part of it.
// A reduction along the split axis would see half of its operand and is an error naming it. In a
// split AIC or AIV kernel each tfree written without split= takes the split of the pop it frees.
// Other kernels are returned as they are, and so are the tiles of a split AIC kernel (whole).
ir::Result<ir::FunctionPtr> SplitVectorKernel(const ir::FunctionPtr& kernel);

}  // namespace pypto::passes
