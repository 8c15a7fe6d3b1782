// A batched matmul too large for the cube's L0 buffers is computed one batch at a time.
#pragma once

#include "pypto/ir/diagnostic.h"
#include "pypto/ir/soc.h"
#include "pypto/ir/stmt.h"

namespace pypto::passes {

// A tile.matmul of [B, M, K] and [B, K, N] tiles (either operand may be one matrix for every batch)
// whose operands or product exceed L0A, L0B or L0C, fed by moves of Mat tiles loaded from global
// memory and read only by stores, becomes a loop over the batch: each iteration loads its own
// [1, M, K] / [1, K, N] windows into Mat (so L1 holds one batch, not all of them), multiplies them
// and stores the [1, M, N] product at its batch. A matrix too large for L0 is then split into
// blocks by AutoTileMatmulL0 like any other. A store whose result is bound (`out = tile.store(...)`)
// has its result replaced by the tensor it writes, as a store inside a loop is written.
ir::Result<ir::StmtPtr> SplitOversizedBatchMatmuls(const ir::StmtPtr& kernel_body, const ir::SocSpec& soc);

}  // namespace pypto::passes
