// An accumulator carried through a K loop written in the kernel, too large for L0C, is computed a
// block at a time, each block running the whole loop.
#pragma once

#include <unordered_set>

#include "pypto/ir/diagnostic.h"
#include "pypto/ir/soc.h"
#include "pypto/ir/stmt.h"

namespace pypto::passes {

// A kernel body with its accumulator loops split.
struct SplitChains {
  ir::StmtPtr body;
  // The operand windows made: AutoTileMatmulL0 may cut these along K, never a window the kernel
  // extracted itself (the kernel placed that one).
  std::unordered_set<const ir::Var*> windows;
};

// `acc = tile.create([M, N], target_memory=Acc)`, carried through a loop whose iterations multiply
// (tile.matmul) or accumulate (tile.matmul_acc) into it from operands moved out of Mat tiles, and
// read after the loop only by stores: when [M, N] exceeds L0C, the create, the loop and the
// stores are repeated for each [m, n] block of the result inside a grid of block loops, each
// iteration's operands becoming [m, K] / [K, n] tile.extract windows of the same Mat tiles.
// AutoTileMatmulL0 then splits a window along K where it still exceeds L0A or L0B.
ir::Result<SplitChains> SplitOversizedAccumulatorChains(const ir::StmtPtr& kernel_body, const ir::SocSpec& soc);

}  // namespace pypto::passes
