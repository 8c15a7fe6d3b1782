// The runtime's Buffer ABI header: the allocation a tensor descriptor points at (`buffer.addr`,
// `buffer.size`). Its presence tells a kernel that the device-side descriptor is ChipTensor (kernels
// test `__has_include("task_interface/buffer.h")` to pick between ChipTensor and the older Tensor).
#ifndef PYPTO_SIM_EXTERN_TASK_INTERFACE_BUFFER_H_
#define PYPTO_SIM_EXTERN_TASK_INTERFACE_BUFFER_H_

#include "tensor.h"  // ChipTensorBuffer

#endif  // PYPTO_SIM_EXTERN_TASK_INTERFACE_BUFFER_H_
