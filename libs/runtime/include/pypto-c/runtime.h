/* C ABI of libpypto_runtime: the tensor descriptor kernels receive, and running a task plan. */
#ifndef PYPTO_C_RUNTIME_H
#define PYPTO_C_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "pypto-c/soc.h"
#include "pypto-c/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PYPTO_MAX_TENSOR_DIMS 5

/* Element types as the runtime numbers them (not the IR's codes). */
typedef enum pypto_rt_dtype {
  PYPTO_RT_FLOAT32 = 0,
  PYPTO_RT_FLOAT16 = 1,
  PYPTO_RT_INT32 = 2,
  PYPTO_RT_INT16 = 3,
  PYPTO_RT_INT8 = 4,
  PYPTO_RT_UINT8 = 5,
  PYPTO_RT_BFLOAT16 = 6,
  PYPTO_RT_INT64 = 7,
  PYPTO_RT_UINT64 = 8,
  PYPTO_RT_UINT16 = 9,
  PYPTO_RT_UINT32 = 10,
  PYPTO_RT_BOOL = 11,
  PYPTO_RT_FP8E4M3FN = 12,
  PYPTO_RT_FP8E8M0 = 13,
  PYPTO_RT_FP4E2M1 = 14
} pypto_rt_dtype;

/* The 128-byte tensor descriptor (two cache lines, trivially copyable), laid out like upstream's
 * ChipTensor. A kernel's args[i] points at one of these; the element at index idx lives at byte
 * buffer_addr + (start_offset + sum(idx[d] * strides[d])) * element_size. */
typedef struct pypto_chip_tensor {
  uint64_t buffer_addr;       /*  0: address of the allocation (dependency key) */
  uint64_t buffer_size;       /*  8: allocation size in bytes */
  uint64_t owner_task_id;     /* 16: creating task, or PYPTO_INVALID_TASK_ID for external tensors */
  uint64_t start_offset;      /* 24: view origin in elements */
  int32_t version;            /* 32 */
  uint32_t ndims;             /* 36: 1..5 */
  uint8_t dtype;              /* 40: pypto_rt_dtype */
  uint8_t manual_dep;         /* 41 */
  uint8_t is_contiguous;      /* 42 */
  uint8_t address_space;      /* 43 */
  uint32_t shapes[PYPTO_MAX_TENSOR_DIMS];  /* 44 */
  uint64_t extent_elem_cache; /* 64: 1 + sum((shape - 1) * stride) */
  uint32_t strides[PYPTO_MAX_TENSOR_DIMS]; /* 72: element strides, always > 0 */
  uint8_t reserved[36];       /* 92..127 */
} pypto_chip_tensor;

#define PYPTO_INVALID_TASK_ID UINT64_MAX

const char* pypto_runtime_version(void);

/* Bytes per element of a runtime dtype (0 for an unknown code). */
size_t pypto_rt_dtype_size(uint8_t dtype);

/* The SoC platform `platform` models, as its backend plugin describes it: what pypto_passes_lower
 * takes, so that a tool lowering for a platform asks the plugins rather than knowing platform names.
 * The strings *soc points at live as long as the process. PYPTO_ERR_NOT_FOUND when no plugin knows the
 * platform (the message names the platforms that are known). */
pypto_status pypto_rt_platform_soc(const char* platform, pypto_soc_desc* soc);

/* Describes caller-owned memory as a contiguous row-major tensor. */
pypto_status pypto_rt_make_external_tensor(void* data, const uint32_t* shape, uint32_t ndims, uint8_t dtype,
                                           pypto_chip_tensor* out);

#ifdef __cplusplus
}
#endif

#endif /* PYPTO_C_RUNTIME_H */
