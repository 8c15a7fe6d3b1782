/* C ABI of libpypto_passes: run the lowering pipeline on a program. */
#ifndef PYPTO_C_PASSES_H
#define PYPTO_C_PASSES_H

#include <stddef.h>

#include "pypto-c/ir.h"
#include "pypto-c/soc.h"
#include "pypto-c/status.h"

#ifdef __cplusplus
extern "C" {
#endif

const char* pypto_passes_version(void);

/* Number of passes in the default pipeline, and the name of the index-th (static storage). */
size_t pypto_passes_pipeline_size(void);
const char* pypto_passes_pipeline_pass_name(size_t index);

/* The property contract of the index-th pass: what it requires, produces and invalidates, each as
 * "{PropertyA, PropertyB}" (static storage); NULL past the end. */
const char* pypto_passes_pipeline_pass_required(size_t index);
const char* pypto_passes_pipeline_pass_produced(size_t index);
const char* pypto_passes_pipeline_pass_invalidated(size_t index);

/* Lowers `program` for the SoC `soc` describes (a platform's, as pypto_rt_platform_soc gives it, or one
 * filled in by the caller: {.table = "Ascend910B"}); a description naming no known table and not
 * spelling one out is PYPTO_ERR_INVALID_ARGUMENT. With verify != 0 every produced property is checked
 * after each pass. On success *lowered is a new handle (destroy with pypto_ir_program_destroy); on
 * failure pypto_last_error_message() holds the diagnostic. */
pypto_status pypto_passes_lower(const pypto_ir_program* program, const pypto_soc_desc* soc, int verify,
                                pypto_ir_program** lowered);

/* Runs the pipeline passes named in `pass_names` (comma-separated, in that order; NULL or "" runs the
 * whole default pipeline) on `program` for the SoC `soc` describes. A pass whose required property neither an
 * earlier pass produced nor the input verifiably has is refused with the property named. With
 * `dump_dir` (NULL for none) the input is written there as 00_input.py and the program after each
 * pass as NN_after_<Pass>.py. Result and errors as for pypto_passes_lower; an unknown pass name is
 * PYPTO_ERR_NOT_FOUND. */
pypto_status pypto_passes_run(const pypto_ir_program* program, const pypto_soc_desc* soc, const char* pass_names,
                              int verify, const char* dump_dir, pypto_ir_program** result);

#ifdef __cplusplus
}
#endif

#endif /* PYPTO_C_PASSES_H */
