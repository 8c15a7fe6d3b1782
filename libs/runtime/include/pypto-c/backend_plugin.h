/* The backend plugin ABI. A plugin is a shared library exporting one C function,
 * PYPTO_BACKEND_PLUGIN_ENTRY, that returns a pointer to a static pypto_backend_plugin.
 * The loader refuses a plugin whose abi_version differs from PYPTO_BACKEND_PLUGIN_ABI_VERSION.
 * Handles are opaque here; plugins built in this tree use the libraries' C++ APIs behind them. */
#ifndef PYPTO_C_BACKEND_PLUGIN_H
#define PYPTO_C_BACKEND_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "pypto-c/runtime.h"
#include "pypto-c/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PYPTO_BACKEND_PLUGIN_ABI_VERSION 1u
#define PYPTO_BACKEND_PLUGIN_ENTRY "pypto_backend_plugin_v1"

typedef struct pypto_ir_program pypto_ir_program; /* a lowered program (libpypto_ir) */
typedef struct pypto_rt_plan pypto_rt_plan;       /* its orchestration as a task plan (libpypto_runtime) */

typedef struct pypto_backend_plugin {
  uint32_t abi_version;        /* PYPTO_BACKEND_PLUGIN_ABI_VERSION at the plugin's build */
  const char* name;            /* "sim" */
  const char* description;     /* one line for `pypto-run --list-platforms` */
  const char* const* platforms; /* NULL-terminated: "a2a3sim", "a5sim", ... */

  /* Writes the platform's artifacts for a compiled program into output_dir (which exists). */
  pypto_status (*prepare)(const char* platform, const pypto_ir_program* lowered, const pypto_rt_plan* plan,
                          const char* output_dir);

  /* Runs the plan; params are the orchestration's tensor arguments in order. Outputs are written
   * through the descriptors' buffers. On failure pypto_last_error_message() says why. */
  pypto_status (*execute)(const char* platform, const pypto_ir_program* lowered, const pypto_rt_plan* plan,
                          const pypto_chip_tensor* params, size_t num_params);
} pypto_backend_plugin;

typedef const pypto_backend_plugin* (*pypto_backend_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* PYPTO_C_BACKEND_PLUGIN_H */
