/* C ABI of libpypto_frontend: parse DSL source into an IR program. */
#ifndef PYPTO_C_FRONTEND_H
#define PYPTO_C_FRONTEND_H

#include <stddef.h>
#include <stdint.h>

#include "pypto-c/ir.h"
#include "pypto-c/status.h"

#ifdef __cplusplus
extern "C" {
#endif

const char* pypto_frontend_version(void);

/* Parses the source of one @pl.jit function. specs_json maps parameter names to their
 * specialisation, e.g. {"a": {"shape": [128, 128], "dtype": "FP32"}}. Starts an embedded
 * Python interpreter if none is running. On a parse error returns PYPTO_ERR_PARSE and
 * pypto_last_error_message() is "file:line:col: error: message". */
pypto_status pypto_frontend_parse_jit(const char* source, const char* filename, int line_offset,
                                      const char* specs_json, pypto_ir_program** program);

/* Parses a @pl.program class (the text pypto_ir_program_print writes, or one written by hand).
 * Errors as for pypto_frontend_parse_jit. */
pypto_status pypto_frontend_parse_program(const char* source, const char* filename, int line_offset,
                                          pypto_ir_program** program);

#ifdef __cplusplus
}
#endif

#endif /* PYPTO_C_FRONTEND_H */
