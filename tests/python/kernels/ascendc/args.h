// The tensor a kernel's args[i] describes, as a typed GM pointer (tensors come first in args[]).
#pragma once
#include <cstdint>

#include "kernel_operator.h"
#include "tensor.h"

template <typename T>
__gm__ T* TensorArg(__gm__ int64_t* args, int index) {
  auto* tensor = reinterpret_cast<__gm__ ChipTensor*>(args[index]);
  return reinterpret_cast<__gm__ T*>(tensor->buffer.addr) + tensor->start_offset;
}
