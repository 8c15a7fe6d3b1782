// Hand-written kernels (a function with an "external_source" attribute) on the simulator. The source is
// compiled once by the host compiler into a shared object, against the simulator's versions of the
// runtime headers (plugins/sim/extern_include: tensor.h, intrinsic.h, pto/pto-inst.hpp), loaded with
// Boost.DLL, and its `kernel_entry(int64_t* args)` is called for each task with args[] as on the
// device: tensor descriptor pointers (signature order), scalars, then the contexts at slots 48 and 49.
//
// The shared object is named by libpypto_backend_extern's content key (the entry, every header it
// includes, the include dirs, the core type), so an edited header recompiles and nothing else does.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "pypto/ir/function.h"
#include "pypto/runtime/runtime.h"
#include "pypto/support/expected.h"
#include "sim_kernel.h"

namespace pypto::sim {

// Whether `function` is hand-written; its source path is then the attribute's value.
bool IsExternalKernel(const ir::Function& function);

// Compiles (unless a build with the same key exists in `build_dir`, or was built or loaded earlier in
// this process) and loads `function`'s kernel, built as for a `core_type` core of `arch` ("a2a3" or
// "a5": the device macros it sees). An empty `build_dir` means a per-user cache directory under the
// system's temporary directory. Errors: a missing source, the compiler's message (with the source's
// path), a shared object without `kernel_entry`.
pypto::expected<DecodedKernel, std::string> LoadExternalKernel(const ir::Function& function, int32_t func_id,
                                                               rt::CoreType core_type, std::string_view arch,
                                                               const std::filesystem::path& build_dir);

// The directory of the simulator's runtime headers for hand-written kernels: $PYPTO_SIM_EXTERN_INCLUDE,
// else `extern_include` beside the plugin (installed), else the source tree's.
std::filesystem::path ExternIncludeDir();

}  // namespace pypto::sim
