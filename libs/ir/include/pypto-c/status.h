/* Status codes and error reporting shared by every pypto C API.
 * No C++ exception ever crosses a pypto_* function: failures return a status, and the message of the
 * most recent failure on the calling thread is available from pypto_last_error_message(). */
#ifndef PYPTO_C_STATUS_H
#define PYPTO_C_STATUS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pypto_status {
  PYPTO_OK = 0,
  PYPTO_ERR_INVALID_ARGUMENT = 1, /* a null handle, a bad name, a wrong shape or dtype */
  PYPTO_ERR_NOT_FOUND = 2,        /* a missing file, platform, function or plugin */
  PYPTO_ERR_PARSE = 3,            /* the DSL source was rejected */
  PYPTO_ERR_COMPILE = 4,          /* a pass or a code generator failed */
  PYPTO_ERR_RUNTIME = 5,          /* a task failed while running */
  PYPTO_ERR_ABI_MISMATCH = 6,     /* a plugin built for another ABI version */
  PYPTO_ERR_INTERNAL = 7,         /* a bug: please report it */
  PYPTO_ERR_UNAVAILABLE = 8       /* a tool or device this machine lacks; what could be done was done */
} pypto_status;

/* The message of the last failed call on this thread ("" when none). Valid until the next call. */
const char* pypto_last_error_message(void);

/* Sets the calling thread's message, for code outside the pypto libraries that answers through a pypto
 * C ABI (a backend plugin written in C): return a failing status after setting it. NULL clears it. */
void pypto_set_last_error_message(const char* message);

/* Frees a string that a pypto_* function returned through an out-parameter. */
void pypto_string_free(char* text);

#ifdef __cplusplus
}
#endif

#endif /* PYPTO_C_STATUS_H */
