/* C ABI of libpypto_passes: run the lowering pipeline on a program. */
#ifndef PYPTO_C_PASSES_H
#define PYPTO_C_PASSES_H

#include <stddef.h>

#include "pypto-c/ir.h"
#include "pypto-c/status.h"

#ifdef __cplusplus
extern "C" {
#endif

const char* pypto_passes_version(void);

/* Number of passes in the default pipeline, and the name of the index-th (static storage). */
size_t pypto_passes_pipeline_size(void);
const char* pypto_passes_pipeline_pass_name(size_t index);

/* Lowers `program` for `platform` ("a2a3sim", "a5", ...). With verify != 0 every produced property
 * is checked after each pass. On success *lowered is a new handle (destroy with
 * pypto_ir_program_destroy); on failure pypto_last_error_message() holds the diagnostic. */
pypto_status pypto_passes_lower(const pypto_ir_program* program, const char* platform, int verify,
                                pypto_ir_program** lowered);

#ifdef __cplusplus
}
#endif

#endif /* PYPTO_C_PASSES_H */
