/* The backend plugin ABI. A plugin is a shared library exporting one C function,
 * PYPTO_BACKEND_PLUGIN_ENTRY, that returns a pointer to a static pypto_backend_plugin.
 * The loader refuses a plugin whose abi_version differs from PYPTO_BACKEND_PLUGIN_ABI_VERSION.
 * Handles are opaque here; plugins built in this tree use the libraries' C++ APIs behind them.
 *
 * ABI history: 1 prepare + execute. 2 adds sessions (open_session, run_session, close_session), so
 * that a program run many times is set up once; the entry point keeps its name, so that a plugin of
 * another version is still found and refused with both version numbers. */
#ifndef PYPTO_C_BACKEND_PLUGIN_H
#define PYPTO_C_BACKEND_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "pypto-c/runtime.h"
#include "pypto-c/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PYPTO_BACKEND_PLUGIN_ABI_VERSION 2u
#define PYPTO_BACKEND_PLUGIN_ENTRY "pypto_backend_plugin_v1"

typedef struct pypto_ir_program pypto_ir_program; /* a lowered program (libpypto_ir) */
typedef struct pypto_rt_plan pypto_rt_plan;       /* its orchestration as a task plan (libpypto_runtime) */
typedef struct pypto_backend_session pypto_backend_session; /* a program made ready to run (the plugin's) */

typedef struct pypto_backend_plugin {
  uint32_t abi_version;        /* PYPTO_BACKEND_PLUGIN_ABI_VERSION at the plugin's build */
  const char* name;            /* "sim" */
  const char* description;     /* one line for `pypto-run --list-platforms` */
  const char* const* platforms; /* NULL-terminated: "a2a3sim", "a5sim", ... */

  /* Writes the platform's artifacts for a compiled program into output_dir (which exists). */
  pypto_status (*prepare)(const char* platform, const pypto_ir_program* lowered, const pypto_rt_plan* plan,
                          const char* output_dir);

  /* Runs the plan once; params are the orchestration's tensor arguments in order. Outputs are written
   * through the descriptors' buffers. On failure pypto_last_error_message() says why. Everything the
   * run needs is set up and torn down within the call: for repeated runs, use a session. */
  pypto_status (*execute)(const char* platform, const pypto_ir_program* lowered, const pypto_rt_plan* plan,
                          const pypto_chip_tensor* params, size_t num_params);

  /* Sessions (ABI 2): the work execute does once per call that does not depend on the tensors
   * (checking and translating the program, the simulated cores, threads) done once, by open_session.
   * The three pointers are all set or all NULL; a plugin without sessions leaves them NULL, and
   * callers then use execute for every run.
   *
   * open_session: prepares `plan` of `lowered` for `platform` and stores the handle in *session (NULL
   *   on failure). The session keeps no reference to lowered or plan: they may be freed after it.
   *   It fails where execute would have failed before running anything, with the same status and
   *   message.
   * run_session: what execute(platform, lowered, plan, params, num_params) does, with the same
   *   statuses, messages and results. Calls on one session from several threads are serialized by
   *   the session; calls on different sessions may run concurrently.
   * close_session: frees the session (NULL is ignored). No run of it may be in progress. */
  pypto_status (*open_session)(const char* platform, const pypto_ir_program* lowered, const pypto_rt_plan* plan,
                               pypto_backend_session** session);
  pypto_status (*run_session)(pypto_backend_session* session, const pypto_chip_tensor* params, size_t num_params);
  void (*close_session)(pypto_backend_session* session);
} pypto_backend_plugin;

typedef const pypto_backend_plugin* (*pypto_backend_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* PYPTO_C_BACKEND_PLUGIN_H */
