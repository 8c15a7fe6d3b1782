// Row-merging a kernel's N-d tiles into 2-D ones, shared by the FlattenTileNdTo2D pass and the
// verifier of TileOps2D (which asks whether a kernel still holding N-d tiles could have lost them).
#pragma once

#include <string>

#include "pypto/ir/diagnostic.h"
#include "pypto/ir/function.h"

namespace pypto::passes {

// `kernel` with every tile of rank 3 or more replaced by its row-merged form ([a, b, c] -> [a*b, c]),
// batched matmuls unrolled into one per batch (ExpandBatchMatmuls), or why it keeps them: an op
// with no 2-D form (a transpose over a batch, an element access by N-d indices, a batched matmul
// that cannot be unrolled, ...). A kernel with no such tile comes back as it is.
pypto::expected<ir::FunctionPtr, std::string> FlattenKernelTiles(const ir::FunctionPtr& kernel);

// The first tile of rank 3 or more the kernel defines or takes (a parameter, an assignment, a loop's
// or an if's value); null when none.
const ir::Var* FirstNdTile(const ir::Function& kernel);

}  // namespace pypto::passes
