/* C ABI of libpypto_ir: inspect and print IR programs through opaque handles. */
#ifndef PYPTO_C_IR_H
#define PYPTO_C_IR_H

#include <stddef.h>
#include <stdint.h>

#include "pypto-c/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pypto_ir_program pypto_ir_program;

/* The library version, "MAJOR.MINOR.PATCH". */
const char* pypto_ir_version(void);

/* Prints the program as DSL-like text; free *text with pypto_string_free. */
pypto_status pypto_ir_program_print(const pypto_ir_program* program, char** text);

/* The program as JSON (the format of pypto/ir/json.h); indent < 0 writes one line, otherwise that many
 * spaces per level. Free *json with pypto_string_free. */
pypto_status pypto_ir_program_to_json(const pypto_ir_program* program, int indent, char** json);

/* Reads a program that pypto_ir_program_to_json wrote; destroy *program with pypto_ir_program_destroy.
 * Malformed input fails with PYPTO_ERR_PARSE and a message naming the JSON path of the fault. */
pypto_status pypto_ir_program_from_json(const char* json, pypto_ir_program** program);

size_t pypto_ir_program_function_count(const pypto_ir_program* program);

/* Name (owned by the program) and pl.FunctionType value of the index-th function. */
pypto_status pypto_ir_program_function_info(const pypto_ir_program* program, size_t index, const char** name,
                                            int* function_type);

void pypto_ir_program_destroy(pypto_ir_program* program);

/* Sets *exists to 1 when an op of that name (e.g. "tile.add") is registered. */
pypto_status pypto_ir_op_exists(const char* name, int* exists);

#ifdef __cplusplus
}
#endif

#endif /* PYPTO_C_IR_H */
