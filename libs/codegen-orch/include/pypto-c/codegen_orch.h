/* C ABI of libpypto_codegen_orch: orchestration C++, task plan and manifest for a lowered program. */
#ifndef PYPTO_C_CODEGEN_ORCH_H
#define PYPTO_C_CODEGEN_ORCH_H

#include "pypto-c/backend_plugin.h"
#include "pypto-c/ir.h"
#include "pypto-c/status.h"

#ifdef __cplusplus
extern "C" {
#endif

const char* pypto_codegen_orch_version(void);

/* Generates the orchestration of a lowered program. *cpp_source (free with pypto_string_free)
 * receives the orchestration C++; *plan (free with pypto_codegen_orch_plan_destroy) the task plan. Either
 * out-parameter may be NULL. When output_dir is non-NULL the artifacts are written there too. */
pypto_status pypto_codegen_orch_generate(const pypto_ir_program* lowered, const char* output_dir, char** cpp_source,
                                         pypto_rt_plan** plan);

size_t pypto_codegen_orch_plan_submit_count(const pypto_rt_plan* plan);
void pypto_codegen_orch_plan_destroy(pypto_rt_plan* plan);

#ifdef __cplusplus
}
#endif

#endif /* PYPTO_C_CODEGEN_ORCH_H */
