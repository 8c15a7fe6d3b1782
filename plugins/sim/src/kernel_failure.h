// How an instruction of a decoded kernel fails while it runs: the runtime's KernelFailed, with the
// instruction described (kernel, index, source text and location) before what went wrong.
#pragma once

#include <fmt/format.h>

#include <string>

#include "pypto/runtime/fatal.h"
#include "pypto/support/expected.h"
#include "sim_kernel.h"

namespace pypto::sim {

inline pypto::unexpected<rt::FatalError> KernelFailure(const DecodedKernel& kernel, size_t index,
                                                       const std::string& what) {
  return pypto::unexpected(
      rt::FatalError{rt::FatalCode::KernelFailed, fmt::format("{}: {}", kernel.Describe(index), what)});
}

}  // namespace pypto::sim
