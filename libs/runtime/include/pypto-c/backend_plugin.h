/* The backend plugin ABI. A plugin is a shared library exporting one C function,
 * PYPTO_BACKEND_PLUGIN_ENTRY, that returns a pointer to a static pypto_backend_plugin.
 * The loader refuses a plugin whose abi_version differs from PYPTO_BACKEND_PLUGIN_ABI_VERSION.
 * Handles are opaque here: a plugin reads the program through pypto-c/ir.h (pypto_ir_program_to_json)
 * and the task plan through pypto-c/plan.h; plugins built in this tree may use the C++ APIs instead.
 *
 * ABI history: 1 prepare + execute. 2 adds sessions (open_session, run_session, close_session), so
 * that a program run many times is set up once. 3 describes each platform (pypto_platform_desc: its
 * SoC, simulator or device, .pto modules, toolchain), so that a new target is a plugin and nothing
 * else, and renames the entry point after the version ("pypto_backend_plugin_v3"). 4 adds
 * run_session_plan at the end of the struct, so that a program whose plan is expanded at each run
 * (one compile for every extent) keeps one session; the entry point is "pypto_backend_plugin_v4".
 * An ABI 3 plugin (PYPTO_BACKEND_PLUGIN_V3_ENTRY) still loads, as a plugin without run_session_plan:
 * its struct is ABI 4's without the last field. Plugins of ABI 1 and 2 export
 * PYPTO_BACKEND_PLUGIN_LEGACY_ENTRY; the loader still finds them and refuses them with both version
 * numbers. */
#ifndef PYPTO_C_BACKEND_PLUGIN_H
#define PYPTO_C_BACKEND_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "pypto-c/ir.h"
#include "pypto-c/plan.h"
#include "pypto-c/runtime.h"
#include "pypto-c/soc.h"
#include "pypto-c/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PYPTO_BACKEND_PLUGIN_ABI_VERSION 4u
#define PYPTO_BACKEND_PLUGIN_ENTRY "pypto_backend_plugin_v4"
/* The entry point of ABI 3, whose plugins still load (without run_session_plan). */
#define PYPTO_BACKEND_PLUGIN_V3_ENTRY "pypto_backend_plugin_v3"
/* The entry point of ABI 1 and 2, looked up only to refuse such a plugin by its version. */
#define PYPTO_BACKEND_PLUGIN_LEGACY_ENTRY "pypto_backend_plugin_v1"

typedef struct pypto_backend_session pypto_backend_session; /* a program made ready to run (the plugin's) */

/* Where a platform runs. A simulator runs here, on this machine's CPUs (or runs nothing, as a
 * tracing platform does); a device platform needs hardware, and its runs may answer
 * PYPTO_ERR_UNAVAILABLE. */
typedef enum pypto_platform_kind {
  PYPTO_PLATFORM_SIMULATOR = 0,
  PYPTO_PLATFORM_DEVICE = 1
} pypto_platform_kind;

/* Whether a compile writes each kernel's PTO-ISA module (kernels/<aic|aiv>/<kernel>.pto) for it. */
typedef enum pypto_pto_modules {
  PYPTO_PTO_OPTIONAL = 0, /* written where the emitter can; a kernel it cannot express is a warning */
  PYPTO_PTO_REQUIRED = 1, /* a kernel without a module is a compile error (ptoas assembles them) */
  PYPTO_PTO_NONE = 2      /* not written */
} pypto_pto_modules;

/* pypto_soc_desc, the SoC a platform models, is in pypto-c/soc.h. */

typedef struct pypto_platform_desc {
  const char* name;          /* "a2a3sim": what RunConfig(platform=...) and `pypto-run -p` name */
  uint32_t kind;             /* pypto_platform_kind */
  /* A simulator that stands for a device platform names it ("a2a3"): a run on that device platform,
   * when no plugin serves it, is refused with a pointer to this simulator. NULL otherwise. */
  const char* simulates;
  pypto_soc_desc soc;
  uint32_t pto_modules;      /* pypto_pto_modules */
  const char* toolchain;     /* the tools prepare needs, for people ("ptoas, ccec"); NULL: none */
} pypto_platform_desc;

typedef struct pypto_backend_plugin {
  uint32_t abi_version;        /* PYPTO_BACKEND_PLUGIN_ABI_VERSION at the plugin's build */
  const char* name;            /* "sim" (every ABI keeps abi_version and name first) */
  const char* description;     /* one line for `pypto-run --list-platforms` */
  const pypto_platform_desc* platforms; /* the platforms it serves, num_platforms of them */
  size_t num_platforms;

  /* Writes the platform's artifacts for a compiled program into output_dir (which exists). */
  pypto_status (*prepare)(const char* platform, const pypto_ir_program* lowered, const pypto_rt_plan* plan,
                          const char* output_dir);

  /* Runs the plan once; params are the orchestration's tensor arguments in order. Outputs are written
   * through the descriptors' buffers. On failure pypto_last_error_message() says why (a plugin sets it
   * with pypto_set_last_error_message). Everything the run needs is set up and torn down within the
   * call: for repeated runs, use a session. */
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

  /* ABI 4: a session running another plan of the same program. A plan expanded at each run (the
   * orchestration's loops bounded by extents known only then) differs from run to run, but its
   * kernels do not: the session opened for the program's plan (its kernels, no tasks needed) runs each
   * run's plan without decoding them again. NULL where the plugin has no sessions or cannot; callers
   * then open a session per plan (or use execute).
   *
   * run_session_plan: what execute(platform, lowered, plan, params, num_params) does, `platform` and
   *   `lowered` those the session was opened with, on the session. `plan` must have the kernels of the
   *   plan the session was opened for (func_ids, names, core types) and the same run options (task
   *   window, heap rings, dependency pools, debugging outputs); a plan that differs there fails with
   *   PYPTO_ERR_INVALID_ARGUMENT and a message naming what differs. Nothing of `plan` is kept after
   *   the call. Calls are serialized with run_session's. */
  pypto_status (*run_session_plan)(pypto_backend_session* session, const pypto_rt_plan* plan,
                                   const pypto_chip_tensor* params, size_t num_params);
} pypto_backend_plugin;

typedef const pypto_backend_plugin* (*pypto_backend_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* PYPTO_C_BACKEND_PLUGIN_H */
