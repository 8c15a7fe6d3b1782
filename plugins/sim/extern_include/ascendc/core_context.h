// The core a kernel runs on, as the simulator binds it before each kernel_entry (pypto_sim_core.h):
// the block and sub-block ids AscendC reads without args[], the core's UB, the runtime's barrier,
// and the one way this library reports a kernel's mistake (Fail: an exception the simulator turns
// into a failed run naming the kernel, task and core).
#ifndef PYPTO_SIM_ASCENDC_CORE_CONTEXT_H_
#define PYPTO_SIM_ASCENDC_CORE_CONTEXT_H_

#include <cstdint>
#include <stdexcept>
#include <string>

#include "intrinsic.h"
#include "pypto_sim_core.h"

namespace AscendC::detail {

// Where a call was written: AscendC entry points that can fail take it as a defaulted last argument,
// so that a message names the kernel's line, not this library's.
struct SourceLine {
  const char* file;
  int line;
  static SourceLine Here(const char* file = __builtin_FILE(), int line = __builtin_LINE()) { return {file, line}; }
};

class KernelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void Fail(const std::string& what, SourceLine where) {
  throw KernelError(std::string(where.file) + ":" + std::to_string(where.line) + ": " + what);
}

// State the vector unit keeps between instructions (SetVectorMask, SetMaskCount, SetAtomicAdd), reset
// for every task as a core starts it.
struct CoreRegisters {
  uint64_t mask_low = ~0ull;
  uint64_t mask_high = ~0ull;
  bool counter_mode = false;
  int atomic = 0;  // 0: none, 1: add, 2: max, 3: min (DataCopy to GM)
};

inline thread_local CoreRegisters t_registers;

}  // namespace AscendC::detail

// The simulator's bind hook is defined once for every kernel library (pypto_sim_bind.h); it starts
// each task of this core through this function, whichever header the kernel included first.
#include "pypto_sim_bind.h"

extern "C" __attribute__((weak, visibility("hidden"))) void pypto_sim_ascendc_start_task(const PyptoSimCore*) {
  AscendC::detail::t_registers = AscendC::detail::CoreRegisters{};
}

namespace AscendC::detail {
inline const PyptoSimCore* BoundCore() { return pypto_sim::BoundCore(); }
}  // namespace AscendC::detail

namespace AscendC::detail {

inline const PyptoSimCore& Core(SourceLine where) {
  const PyptoSimCore* core = BoundCore();
  if (!core)
    Fail("this AscendC call needs the core it runs on, and the simulator bound none (kernel_operator.h must be "
         "included by the kernel's shared object, which then defines pypto_sim_bind_core)",
         where);
  return *core;
}

}  // namespace AscendC::detail

namespace AscendC {

inline int64_t GetBlockIdx(detail::SourceLine where = detail::SourceLine::Here()) {
  return get_block_idx(detail::Core(where).args);
}
inline int64_t GetBlockNum(detail::SourceLine where = detail::SourceLine::Here()) {
  return get_block_num(detail::Core(where).args);
}
inline int64_t GetSubBlockIdx(detail::SourceLine where = detail::SourceLine::Here()) {
  return get_sub_block_id(detail::Core(where).args);
}
// A2/A3 pair each cube with two vector cores; the sub-block count is that ratio.
inline int64_t GetSubBlockNum() { return 2; }
inline int64_t GetTaskRation() { return 2; }

}  // namespace AscendC

#endif  // PYPTO_SIM_ASCENDC_CORE_CONTEXT_H_
