// CANN 9's header for AscendC's cube path (GM to L1 copies, LoadData, Mmad, Fixpipe), with the tensors
// and queues it works on.
#ifndef PYPTO_SIM_KERNEL_CUBE_INTF_H_
#define PYPTO_SIM_KERNEL_CUBE_INTF_H_

#include "kernel_operator.h"

#endif  // PYPTO_SIM_KERNEL_CUBE_INTF_H_
