// The one definition of the simulator's bind hook (pypto_sim_core.h) for every kernel library on the
// include path. The simulator calls `pypto_sim_bind_core` on the kernel's thread before each
// kernel_entry; this header defines it (weak, so every translation unit of a kernel may include it) to
// keep the core, then to let each library that the kernel's shared object contains start its task:
// AscendC resets its per-task registers (mask, atomic mode) and its trap checks through
// `pypto_sim_ascendc_start_task`, weak and unresolved (null) when no translation unit includes
// kernel_operator.h. So pto-inst.hpp and kernel_operator.h may come in either order, or alone.
#ifndef PYPTO_SIM_BIND_H_
#define PYPTO_SIM_BIND_H_

#include "pypto_sim_core.h"

namespace pypto_sim {
inline thread_local const PyptoSimCore* t_bound_core = nullptr;
// Counts the tasks this thread started, so that per-task state can notice a new task lazily.
inline thread_local uint64_t t_task_serial = 0;
// The core of the task the thread runs now, or null outside the simulator.
inline const PyptoSimCore* BoundCore() { return t_bound_core; }
}  // namespace pypto_sim

// Defined by ascendc/core_context.h. Hidden: each kernel's shared object starts its own library.
extern "C" __attribute__((weak, visibility("hidden"))) void pypto_sim_ascendc_start_task(const PyptoSimCore* core);

extern "C" __attribute__((weak, visibility("default"))) void pypto_sim_bind_core(const PyptoSimCore* core) {
  pypto_sim::t_bound_core = core;
  ++pypto_sim::t_task_serial;
  if (pypto_sim_ascendc_start_task) pypto_sim_ascendc_start_task(core);
}

#endif  // PYPTO_SIM_BIND_H_
