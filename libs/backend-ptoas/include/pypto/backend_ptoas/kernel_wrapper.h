// The C++ file the runtime compiles for a ptoas-built kernel: ptoas's output plus a fixed-ABI entry.
#pragma once

#include <string>
#include <string_view>

#include "pypto/support/expected.h"

namespace pypto::ir {
class Function;
}  // namespace pypto::ir

namespace pypto::backend_ptoas {

// Adapts ptoas's C++ for embedding: drops the includes and `using namespace pto;` the wrapper
// already has, makes its AICORE entry function a file-local `static __aicore__` one, and renames the
// runtime descriptor type `Tensor` to the runtime's current name `ChipTensor`.
std::string PreprocessPtoasOutput(std::string_view ptoas_cpp);

// The whole wrapper source: header, the preprocessed `ptoas_cpp` (which must define the function
// named after the kernel), and `extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args)`
// that unpacks tensors (args[i] points at a 128-byte ChipTensor; data = buffer.addr + start_offset
// elements), then scalars (raw 64-bit values), and calls the kernel in the module's argument order.
// With an empty `ptoas_cpp` the caller provides the kernel function before the entry.
pypto::expected<std::string, std::string> EmitKernelWrapper(const ir::Function& kernel,
                                                            std::string_view ptoas_cpp = {});

}  // namespace pypto::backend_ptoas
