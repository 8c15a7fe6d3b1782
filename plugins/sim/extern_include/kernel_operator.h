// AscendC for hand-written kernels on the simulator: the subset of CANN's kernel_operator.h that
// docs/cce-kernels.md lists, implemented on the host over this core's memories (one header per
// family under ascendc/). A kernel includes it exactly as on the device.
#ifndef PYPTO_SIM_KERNEL_OPERATOR_H_
#define PYPTO_SIM_KERNEL_OPERATOR_H_

#include "ascendc/keywords.h"
#include "ascendc/scalar_types.h"
#include "ascendc/scalar_utils.h"
#include "ascendc/core_context.h"
#include "ascendc/position.h"
#include "ascendc/global_tensor.h"
#include "ascendc/local_tensor.h"
#include "ascendc/tpipe.h"
#include "ascendc/data_copy.h"
#include "ascendc/vector_mask.h"
#include "ascendc/vector_binary.h"
#include "ascendc/vector_scalar.h"
#include "ascendc/vector_unary.h"
#include "ascendc/duplicate.h"
#include "ascendc/cast.h"
#include "ascendc/compare_select.h"
#include "ascendc/reduce.h"
#include "ascendc/brcb.h"
#include "ascendc/copy.h"
#include "ascendc/sync.h"
#include "ascendc/cube_data_copy.h"
#include "ascendc/cube_load_data.h"
#include "ascendc/cube_mmad.h"
#include "ascendc/cube_fixpipe.h"
#include "ascendc/cross_core.h"
#include "ascendc/reduce_pattern.h"
#include "ascendc/broadcast.h"

#endif  // PYPTO_SIM_KERNEL_OPERATOR_H_
