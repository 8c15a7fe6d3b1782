// Orchestration reads of tensor elements used only by kernels move into those kernels.
#pragma once

#include "pypto/ir/function.h"

namespace pypto::passes {

// `s = pl.read(scales, [0])` in orchestration code, with `s` used inside pl.at / pl.spmd regions
// (pypto-lib's hc_pre reads its three gate scales so): each region that uses `s` starts with its
// own `s = pl.read(scales, [0])`, so the kernel reads the element when it runs (the tensor becomes
// one of its parameters), and the orchestration read goes away once nothing else uses it. A read
// whose value the orchestration itself needs (a loop bound, an if condition, a kernel call's
// argument) stays, and code generation reports it.
//
// The kernel reads the tensor when it runs: a kernel launched between the read and the region
// that writes the element would be seen by the region, where Python reads before that write.
ir::StmtPtr SinkTensorReads(const ir::StmtPtr& orchestration_body);

}  // namespace pypto::passes
