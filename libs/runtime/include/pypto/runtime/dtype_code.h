// The runtime's element-type code (PYPTO_RT_*, pypto-c/runtime.h) of each IR dtype: the one map the
// orchestration codegen (task plans, generated C++) and the simulator (kernel parameters) both read,
// so a tensor's dtype means the same thing on either side of the runtime.
#pragma once

#include <cstdint>
#include <optional>

#include "pypto/ir/dtype.h"

namespace pypto::rt {

// None for a dtype the runtime has no code for. INDEX is a 64-bit integer, as upstream's runtime has it.
std::optional<uint8_t> RuntimeDtypeCode(ir::DataType dtype);

}  // namespace pypto::rt
