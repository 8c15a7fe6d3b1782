// The simulator's tile compute kernels, one concept per header under kernels/: element-wise ops,
// reductions, broadcasts, matmul and type conversion. All work on dense row-major arrays; the
// vectorized ones use Highway and dispatch once per call to the best target the host supports.
#pragma once

#include "kernels/broadcast.h"    // IWYU pragma: export
#include "kernels/convert.h"      // IWYU pragma: export
#include "kernels/elementwise.h"  // IWYU pragma: export
#include "kernels/matmul.h"       // IWYU pragma: export
#include "kernels/reduce.h"       // IWYU pragma: export

namespace pypto::sim {

// The Highway target the kernels run on, e.g. "AVX2" (for logs and listings).
const char* TileOpsTarget();

}  // namespace pypto::sim
