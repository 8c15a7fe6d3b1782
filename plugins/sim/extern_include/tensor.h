// The tensor descriptor a hand-written kernel reads through args[i], for kernels compiled for the
// simulator. It is the runtime's pypto_chip_tensor (libs/runtime/include/pypto-c/runtime.h), spelled
// the way device kernels name its fields: the allocation as `buffer.addr` / `buffer.size`. The
// static_asserts pin every offset to the runtime's, so a kernel built here reads the same bytes.
#ifndef PYPTO_SIM_EXTERN_TENSOR_H_
#define PYPTO_SIM_EXTERN_TENSOR_H_

#include <cstddef>
#include <cstdint>

#include "pto/address_spaces.h"

#define PYPTO_SIM_MAX_TENSOR_DIMS 5

struct ChipTensorBuffer {
  uint64_t addr;  // address of the allocation
  uint64_t size;  // its size in bytes
};

struct ChipTensor {
  ChipTensorBuffer buffer;     //  0
  uint64_t owner_task_id;      // 16
  uint64_t start_offset;       // 24: the view's first element, in elements from buffer.addr
  int32_t version;             // 32
  uint32_t ndims;              // 36
  uint8_t dtype;               // 40
  uint8_t manual_dep;          // 41
  uint8_t is_contiguous;       // 42
  uint8_t address_space;       // 43
  uint32_t shapes[PYPTO_SIM_MAX_TENSOR_DIMS];   // 44
  uint64_t extent_elem_cache;  // 64
  uint32_t strides[PYPTO_SIM_MAX_TENSOR_DIMS];  // 72: element strides
  uint8_t reserved[36];        // 92..127
};

static_assert(sizeof(ChipTensor) == 128, "ChipTensor is two cache lines");
static_assert(offsetof(ChipTensor, start_offset) == 24 && offsetof(ChipTensor, ndims) == 36 &&
                  offsetof(ChipTensor, dtype) == 40 && offsetof(ChipTensor, shapes) == 44 &&
                  offsetof(ChipTensor, extent_elem_cache) == 64 && offsetof(ChipTensor, strides) == 72,
              "ChipTensor must match the runtime's descriptor");

#endif  // PYPTO_SIM_EXTERN_TENSOR_H_
