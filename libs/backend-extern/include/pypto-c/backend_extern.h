/* C ABI of libpypto_backend_extern: hand-written kernels referenced from a PyPTO program. */
#ifndef PYPTO_C_BACKEND_EXTERN_H
#define PYPTO_C_BACKEND_EXTERN_H

#include <stddef.h>

#include "pypto-c/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library version, "MAJOR.MINOR.PATCH". */
const char* pypto_extern_version(void);

/* The content cache key (32 hex digits) of `entry` and its #include closure over `include_dirs`
 * (n entries; may be NULL when n is 0). Free *out_hex with pypto_string_free.
 * PYPTO_ERR_NOT_FOUND when the entry cannot be read. */
pypto_status pypto_extern_cache_key(const char* entry, const char* const* include_dirs, size_t n, char** out_hex);

/* Resolves a kernel source path written relative to `defining_file` (a .py file) to an absolute
 * path. Free *out with pypto_string_free. PYPTO_ERR_NOT_FOUND when the file does not exist. */
pypto_status pypto_extern_resolve_source(const char* path, const char* defining_file, char** out);

#ifdef __cplusplus
}
#endif

#endif /* PYPTO_C_BACKEND_EXTERN_H */
