/* A task plan as plugins read it: the orchestration of a compiled program, as the tasks it submits.
 *
 * pypto_rt_plan_describe gives a C plugin plain structs; pypto_rt_plan_to_json gives the same facts
 * as JSON, for plugins written in languages that read JSON more easily (docs/plugin-abi.md has its
 * form). Both are snapshots: a description stays valid after the plan is freed, until
 * pypto_rt_plan_desc_free. */
#ifndef PYPTO_C_PLAN_H
#define PYPTO_C_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "pypto-c/runtime.h"
#include "pypto-c/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pypto_rt_plan pypto_rt_plan; /* an orchestration as a task plan (libpypto_runtime) */

typedef enum pypto_core_type { PYPTO_CORE_AIC = 0, PYPTO_CORE_AIV = 1 } pypto_core_type;

/* How a task uses an argument (upstream's names). The runtime orders tasks by these: a task waits for
 * the earlier writers of what it reads and for the earlier readers and writers of what it writes;
 * NODEP arguments order nothing. */
typedef enum pypto_arg_direction {
  PYPTO_ARG_INPUT = 0,
  PYPTO_ARG_OUTPUT = 1,
  PYPTO_ARG_INOUT = 2,
  PYPTO_ARG_OUTPUT_EXISTING = 3,
  PYPTO_ARG_NODEP = 4,
  PYPTO_ARG_SCALAR = 5
} pypto_arg_direction;

/* A tensor with storage: an orchestration parameter (the caller's) or an intermediate the runtime
 * allocates. Views are not listed: an argument's region says where on its tensor it lies. */
typedef struct pypto_plan_tensor {
  const char* name;
  uint8_t dtype;      /* pypto_rt_dtype */
  uint8_t is_param;   /* 1: a parameter, 0: an intermediate */
  uint32_t ndims;
  uint32_t shape[PYPTO_MAX_TENSOR_DIMS];
} pypto_plan_tensor;

/* The elements a tensor argument covers: index idx of the argument is element
 * start + sum(idx[d] * strides[d]) of tensor `root` (row-major), so every element lies in
 * [start, start + extent). */
typedef struct pypto_plan_region {
  uint32_t root;      /* index into pypto_plan_desc.tensors */
  uint64_t start;
  uint64_t extent;    /* 1 + sum((shape[d] - 1) * strides[d]); 0 for an empty view */
  uint32_t ndims;
  uint32_t shape[PYPTO_MAX_TENSOR_DIMS];
  uint32_t strides[PYPTO_MAX_TENSOR_DIMS];
} pypto_plan_region;

typedef struct pypto_plan_arg {
  uint32_t direction;         /* pypto_arg_direction */
  const char* tensor;         /* the operand as the orchestration names it (a view's own name); NULL for a scalar */
  pypto_plan_region region;   /* tensors only */
  uint64_t scalar;            /* scalars only: the value's bit pattern */
} pypto_plan_arg;

typedef struct pypto_plan_task_kernel {
  int32_t func_id;            /* into pypto_plan_desc.kernels, by func_id */
  uint32_t core_type;         /* pypto_core_type */
} pypto_plan_task_kernel;

/* One submit of the orchestration, in program order: its index is its task number. */
typedef struct pypto_plan_task {
  /* 0: a dependency-only task (pl.system.task_dummy); 1: a kernel; 2 or 3: the members of a mixed
   * (Group) submit, which run together and count as one task. */
  size_t num_kernels;
  pypto_plan_task_kernel kernels[3];
  int32_t block_num;          /* an SPMD launch: this many blocks */
  const pypto_plan_arg* args; /* tensors first, then scalars */
  size_t num_args;
  const uint32_t* deps;       /* explicit dependencies (deps=[...]): indices of earlier tasks */
  size_t num_deps;
  uint16_t scopes_opened;     /* runtime scopes opened just before it */
  uint16_t scopes_closed;     /* and closed just after it */
  uint8_t manual_scope;       /* the innermost scope it opens is a pl.manual_scope */
} pypto_plan_task;

typedef struct pypto_plan_kernel {
  int32_t func_id;
  const char* name;           /* the kernel function of the lowered program */
  uint32_t core_type;         /* pypto_core_type */
} pypto_plan_kernel;

typedef struct pypto_plan_desc {
  const char* orchestration;  /* the orchestration function's name */
  const pypto_plan_tensor* tensors; /* parameters in order, then intermediates */
  size_t num_tensors;
  const pypto_plan_kernel* kernels;
  size_t num_kernels;
  const pypto_plan_task* tasks;
  size_t num_tasks;
} pypto_plan_desc;

/* Describes `plan`; free *desc with pypto_rt_plan_desc_free. Fails with PYPTO_ERR_INVALID_ARGUMENT
 * for a view outside its tensor or a reference to a tensor the plan lacks. */
pypto_status pypto_rt_plan_describe(const pypto_rt_plan* plan, pypto_plan_desc** desc);
void pypto_rt_plan_desc_free(pypto_plan_desc* desc);

/* The same description as JSON (docs/plugin-abi.md); indent < 0 writes one line, otherwise that many
 * spaces per level. Free *json with pypto_string_free. */
pypto_status pypto_rt_plan_to_json(const pypto_rt_plan* plan, int indent, char** json);

#ifdef __cplusplus
}
#endif

#endif /* PYPTO_C_PLAN_H */
