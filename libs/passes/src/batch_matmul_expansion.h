// A matmul over a batch of matrices as one 2-D matmul per batch, for FlattenTileNdTo2D: merged into
// rows, [B, M, K] x [B, K, N] would multiply a [B*M, K] matrix by a [B*K, N] one, which is not the
// batch of products.
#pragma once

#include <string>

#include "pypto/ir/diagnostic.h"
#include "pypto/ir/stmt.h"

namespace pypto::passes {

// `body` with every tile.matmul / tile.matmul_acc whose tiles have a batch (a leading dimension
// above 1) unrolled into one matmul per batch index b: each operand with a matrix per batch is
// loaded per batch (a [1, M, K] window at the batch's offset instead of the kernel's whole
// [B, M, K] load), or sliced per batch where the kernel computes it (a vector op's result); an
// operand that is one matrix for every batch (2-D, or batch 1) is read whole by every matmul; the
// product's stores and matmul_accs become one per batch, and a loop carrying it carries one value
// per batch. The result keeps tiles with leading 1s, which FlattenTileNdTo2D then merges like any
// other. A body with no batched matmul comes back as it is; one with a batched matmul it cannot
// expand (an Acc operand from another block, a product read by a vector op, ...) comes back as why.
pypto::expected<ir::StmtPtr, std::string> ExpandBatchMatmuls(const ir::StmtPtr& body);

}  // namespace pypto::passes
