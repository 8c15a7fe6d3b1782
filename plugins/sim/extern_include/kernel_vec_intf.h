// CANN 9's header for AscendC's vector instructions (element-wise, scalar, unary, Duplicate, Cast,
// compare/select, reductions, Brcb, Copy), with the tensors, queues and copies they work on.
#ifndef PYPTO_SIM_KERNEL_VEC_INTF_H_
#define PYPTO_SIM_KERNEL_VEC_INTF_H_

#include "kernel_operator.h"

#endif  // PYPTO_SIM_KERNEL_VEC_INTF_H_
