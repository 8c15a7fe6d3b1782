// Linked into every hand-written kernel's shared object on the simulator, which is built with
// -Wl,--wrap=exit,--wrap=quick_exit,--wrap=_Exit,--wrap=_exit: the kernel's own calls of these
// functions come here instead of to the C library. After loading the object the simulator points
// pypto_sim_exit_hook at its handler, which abandons the kernel and fails its task (KernelFailed,
// naming the kernel and the call), so that a kernel cannot end the whole process without a word.
// Outside a kernel's run (no hook, or a thread the simulator did not start the kernel on) the call
// goes on to the C library.
#include <stdlib.h>

extern "C" {

__attribute__((visibility("default"))) void (*pypto_sim_exit_hook)(const char* call, int status) = nullptr;

[[noreturn]] void __real_exit(int status);
[[noreturn]] void __real_quick_exit(int status);
[[noreturn]] void __real__Exit(int status);
[[noreturn]] void __real__exit(int status);

[[noreturn]] void __wrap_exit(int status) {
  if (pypto_sim_exit_hook) pypto_sim_exit_hook("exit", status);
  __real_exit(status);
}

[[noreturn]] void __wrap_quick_exit(int status) {
  if (pypto_sim_exit_hook) pypto_sim_exit_hook("quick_exit", status);
  __real_quick_exit(status);
}

[[noreturn]] void __wrap__Exit(int status) {
  if (pypto_sim_exit_hook) pypto_sim_exit_hook("_Exit", status);
  __real__Exit(status);
}

[[noreturn]] void __wrap__exit(int status) {
  if (pypto_sim_exit_hook) pypto_sim_exit_hook("_exit", status);
  __real__exit(status);
}

}  // extern "C"
