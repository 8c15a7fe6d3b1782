/* C ABI of libpypto_driver: compile a program from its source text for a platform into a build
 * directory, load a build directory again, and run it with tensors. The driver owns the whole
 * pipeline (parse, lower, passes, orchestration, kernel modules, the platform plugin's build); a
 * caller only binds arguments.
 *
 *   pypto_driver_options options = {.platform = "a2a3sim", .output_dir = "build_add"};
 *   pypto_driver_program* program = NULL;
 *   if (pypto_driver_compile_source(source, "add.py", &options, &program) != PYPTO_OK)
 *     fprintf(stderr, "%s\n", pypto_last_error_message());   // "add.py:7:9: error: ..."
 *   pypto_chip_tensor args[3];  ... pypto_rt_make_external_tensor(...) for each parameter ...
 *   pypto_driver_run(program, args, 3);
 *   pypto_driver_program_destroy(program);
 *
 * Errors: every function returns a status; the message of a failure is pypto_last_error_message()
 * (pypto-c/status.h), on the calling thread, located ("file:line:col: error: ...") where the source
 * is at fault. */
#ifndef PYPTO_C_DRIVER_H
#define PYPTO_C_DRIVER_H

#include <stddef.h>

#include "pypto-c/ir.h"
#include "pypto-c/runtime.h"
#include "pypto-c/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A compiled program: its lowered IR, its task plan, its build directory, and the platform session
 * its runs share. */
typedef struct pypto_driver_program pypto_driver_program;

typedef struct pypto_driver_options {
  const char* platform;   /* a platform a plugin serves (pypto-run --list-platforms); required */
  const char* output_dir; /* the build directory, created when missing; required */
  int verify;             /* non-zero: check every property each pass produces */
  const char* dump_dir;   /* NULL, or where the IR after each pass is written (NN_after_<Pass>.py) */
  int task_window;        /* the runtime's ring task window; 0 for the default */
} pypto_driver_options;

const char* pypto_driver_version(void);

/* Parses `source` (a @pl.program class, as written by hand or by pypto_ir_program_print; `filename`
 * is what its errors name) and compiles it as pypto_driver_compile_program does. Starts an embedded
 * Python interpreter if none is running (the frontend reads the source with Python's `ast`). A
 * rejected source is PYPTO_ERR_PARSE. */
pypto_status pypto_driver_compile_source(const char* source, const char* filename, const pypto_driver_options* options,
                                         pypto_driver_program** program);

/* Lowers `program` (parsed, not yet lowered) for options->platform and writes its build directory.
 * An unknown platform is PYPTO_ERR_NOT_FOUND naming the known ones; a pass or code generator that
 * rejects the program is PYPTO_ERR_COMPILE; a device platform this machine cannot build or run for is
 * PYPTO_ERR_UNAVAILABLE. On success *program is a new handle (pypto_driver_program_destroy). */
pypto_status pypto_driver_compile_program(const pypto_ir_program* parsed, const pypto_driver_options* options,
                                          pypto_driver_program** program);

/* A build directory a compile wrote, made runnable again on `platform` (nothing in it is written).
 * A directory without lowered_program.py is PYPTO_ERR_NOT_FOUND ("DIR is not a pypto build directory:
 * DIR/lowered_program.py is missing"). */
pypto_status pypto_driver_load(const char* build_dir, const char* platform, pypto_driver_program** program);

/* The orchestration's parameters, in the order pypto_driver_run takes its tensors. */
size_t pypto_driver_param_count(const pypto_driver_program* program);
const char* pypto_driver_param_name(const pypto_driver_program* program, size_t index); /* NULL past the end */

/* The build directory and the platform of `program` (valid as long as the handle). */
const char* pypto_driver_output_dir(const pypto_driver_program* program);
const char* pypto_driver_platform(const pypto_driver_program* program);

/* Runs `program` with one tensor per parameter (pypto_rt_make_external_tensor describes caller
 * memory); outputs are written into their tensors' memory. A wrong count is PYPTO_ERR_INVALID_ARGUMENT;
 * a failed run PYPTO_ERR_RUNTIME with the plugin's message. The first run opens the platform's session,
 * later ones reuse it; runs from several threads take turns. */
pypto_status pypto_driver_run(pypto_driver_program* program, const pypto_chip_tensor* args, size_t count);

/* NULL is accepted. */
void pypto_driver_program_destroy(pypto_driver_program* program);

/* The known platforms, one tab-separated line each (name, plugin, kind, SoC, description, plugin
 * file), in a string to free with pypto_string_free. */
char* pypto_driver_platforms_table(void);

/* Every program compiled from now on, in this process and the processes it starts, prints its
 * hand-written kernels' args[] tables to stderr (pypto-run --explain-abi). */
void pypto_driver_request_abi_explanations(void);

#ifdef __cplusplus
}
#endif

#endif /* PYPTO_C_DRIVER_H */
