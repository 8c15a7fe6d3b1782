// Turning C++ diagnostics and runtime failures into the Python exceptions users catch.
#pragma once

#include <pybind11/pybind11.h>

#include "pypto/ir/diagnostic.h"

namespace pypto::bindings {

// Raises the pypto.language.parser.diagnostics exception for `diagnostic` (rendered with source).
[[noreturn]] void ThrowDiagnostic(const ir::Diagnostic& diagnostic);

template <typename T>
T Unwrap(ir::Result<T> result) {
  if (!result) ThrowDiagnostic(result.error());
  return std::move(*result);
}

}  // namespace pypto::bindings
