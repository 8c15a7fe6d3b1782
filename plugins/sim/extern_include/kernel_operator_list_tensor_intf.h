// CANN's header of AscendC's list tensors (ListTensorDesc, TensorDesc: a GM table of tensor
// addresses and shapes). Kernels include it by habit; none of its interfaces is implemented here
// yet, so a kernel that uses one fails to compile with the name it lacks.
#ifndef PYPTO_SIM_KERNEL_OPERATOR_LIST_TENSOR_INTF_H_
#define PYPTO_SIM_KERNEL_OPERATOR_LIST_TENSOR_INTF_H_

#include "kernel_operator.h"

#endif  // PYPTO_SIM_KERNEL_OPERATOR_LIST_TENSOR_INTF_H_
