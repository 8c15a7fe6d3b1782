// CANN 9's header for AscendC's basic API (the kernels that set ASC_DEVKIT_MAJOR 9 include it instead
// of kernel_operator.h): the same interfaces, so it is kernel_operator.h.
#ifndef PYPTO_SIM_BASIC_API_KERNEL_BASIC_INTF_H_
#define PYPTO_SIM_BASIC_API_KERNEL_BASIC_INTF_H_

#include "kernel_operator.h"

#endif  // PYPTO_SIM_BASIC_API_KERNEL_BASIC_INTF_H_
