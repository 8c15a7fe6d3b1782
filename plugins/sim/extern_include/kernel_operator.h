// AscendC for hand-written kernels on the simulator: the subset of CANN's kernel_operator.h that
// docs/cce-kernels.md lists, implemented on the host over this core's memories (one header per
// family under ascendc/). A kernel includes it exactly as on the device.
#ifndef PYPTO_SIM_KERNEL_OPERATOR_H_
#define PYPTO_SIM_KERNEL_OPERATOR_H_

#include "ascendc/keywords.h"
#include "ascendc/scalar_types.h"
#include "ascendc/core_context.h"
#include "ascendc/position.h"
#include "ascendc/global_tensor.h"
#include "ascendc/local_tensor.h"
#include "ascendc/tpipe.h"
#include "ascendc/data_copy.h"
#include "ascendc/sync.h"

#endif  // PYPTO_SIM_KERNEL_OPERATOR_H_
