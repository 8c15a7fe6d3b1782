// Splitting a kernel that runs both cube and vector work into its AIC and AIV members.
#pragma once

#include "pypto/ir/function.h"
#include "pypto/ir/diagnostic.h"

namespace pypto::passes {

// The cube part and the vector part of a mixed InCore kernel, each a whole kernel of its own.
struct MixedKernelMembers {
  ir::FunctionPtr aic, aiv;
};

// Each member keeps the statements whose tiles live on its core (Mat, Left, Right, Acc on the cube;
// Vec on the vector core), the scalar work and control flow both need, and the stores of its own
// tiles. A tile.move from one core's buffer to the other's (an Acc product read by vector ops, a
// Vec tile multiplied by the cube) becomes a push on the producer's side and a pop, freed at once,
// on the consumer's. Both members run every loop and if of the kernel, so each pipe carries its
// tiles in program order, and one pipe per direction suffices.
//
// Fails, naming the value, when one side needs a value the other computes that is not a tile
// crossing by a move (a scalar read from a tile of the other core).
ir::Result<MixedKernelMembers> SplitMixedKernel(const ir::Function& kernel);

}  // namespace pypto::passes
