// Orchestration reads of tensors whose values only kernels use move into those kernels.
#pragma once

#include "pypto/ir/diagnostic.h"
#include "pypto/ir/function.h"

namespace pypto::passes {

// Orchestration code may read a tensor only for its kernels: `s = pl.read(scales, [0])` (pypto-lib's
// hc_pre reads its gate scales so) or `cos_lo = rope_cos[pos : pos + 1, 0:64]` (qwen3's decode
// slices its RoPE rows), and compute scalars from what it read (`pos = ctx_len - 1`). The task plan
// cannot read tensor data, so each pl.at / pl.spmd region that uses such a value starts with its own
// copy of the statements computing it (the tensors become its parameters), and the orchestration
// drops them. A value the orchestration itself needs (a loop bound, an if condition, a kernel
// call's argument) stays: a read is reported by code generation, a slice here, at the slice.
//
// The kernel reads when it runs: a kernel launched between the read and the region that writes
// those elements would be seen by the region, where Python reads before that write.
ir::Result<ir::StmtPtr> SinkTensorReads(const ir::StmtPtr& orchestration_body);

}  // namespace pypto::passes
