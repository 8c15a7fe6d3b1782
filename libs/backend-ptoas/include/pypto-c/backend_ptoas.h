/* C ABI of libpypto_backend_ptoas: PTO-dialect MLIR modules and kernel wrappers for lowered kernels. */
#ifndef PYPTO_C_BACKEND_PTOAS_H
#define PYPTO_C_BACKEND_PTOAS_H

#include "pypto-c/ir.h"
#include "pypto-c/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library version, "MAJOR.MINOR.PATCH". */
const char* pypto_ptoas_version(void);

/* The .pto module text of the kernel `function_name` for `arch` ("a2a3" or "a5"), with source
 * locations. Free *out_text with pypto_string_free. PYPTO_ERR_NOT_FOUND for an unknown function,
 * PYPTO_ERR_INVALID_ARGUMENT for an unknown arch, PYPTO_ERR_COMPILE when the kernel cannot be lowered. */
pypto_status pypto_ptoas_emit_module(const pypto_ir_program* program, const char* function_name, const char* arch,
                                     char** out_text);

/* The same module with every pto operation in MLIR's generic form ("pto.tload"(...) : (...) -> ()),
 * which MLIR tools parse without the PTO dialect (mlir-opt --allow-unregistered-dialect); ptoas reads
 * the form pypto_ptoas_emit_module gives. Arguments, errors and freeing as pypto_ptoas_emit_module's. */
pypto_status pypto_ptoas_emit_module_generic(const pypto_ir_program* program, const char* function_name,
                                             const char* arch, char** out_text);

/* The kernel_entry wrapper source around `ptoas_cpp` (ptoas's output; NULL for none).
 * Free *out_text with pypto_string_free. */
pypto_status pypto_ptoas_emit_kernel_wrapper(const pypto_ir_program* program, const char* function_name,
                                             const char* ptoas_cpp, char** out_text);

#ifdef __cplusplus
}
#endif

#endif /* PYPTO_C_BACKEND_PTOAS_H */
