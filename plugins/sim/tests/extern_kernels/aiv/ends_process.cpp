// Test kernel: ends the process the way args[1] selects (0: exit, 1: quick_exit, 2: _Exit, 3: _exit,
// 4: abort, 5: a failed assert), with status 7. The simulator must fail the task instead.
#include <cassert>
#include <cstdint>
#include <cstdlib>
#include <unistd.h>

#include "tensor.h"

extern "C" void kernel_entry(int64_t* args) {
  switch (args[1]) {
    case 0: std::exit(7);
    case 1: std::quick_exit(7);
    case 2: std::_Exit(7);
    case 3: _exit(7);
    case 4: std::abort();
    default: assert(args[1] == 0 && "the kernel's own check");
  }
}
