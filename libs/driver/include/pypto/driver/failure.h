// How a step of the driver fails: what kind of failure it is decides how a caller reports it (a
// located error, a wrong argument, a device this machine lacks, a failed run).
#pragma once

#include <string>

#include "pypto/ir/diagnostic.h"
#include "pypto/support/expected.h"

namespace pypto::driver {

enum class FailureKind {
  Diagnostic,             // the source or the pipeline rejected the program: `diagnostic` is located
  InvalidArgument,        // an unknown platform, a directory that is not a build directory
  DeviceUnavailable,      // the platform's device, or the plugin serving it, is not on this machine
  DeviceBuildIncomplete,  // the device build stopped after the artifacts: a tool is missing
  Runtime,                // a run failed (the plugin's message)
};

struct Failure {
  FailureKind kind = FailureKind::Runtime;
  // The message; for FailureKind::Diagnostic also its location, kind and hint.
  ir::Diagnostic diagnostic;

  // The message as a user reads it: "file:line:col: error: message" where the failure is located.
  std::string str() const;
};

template <typename T>
using Result = pypto::expected<T, Failure>;

inline pypto::unexpected<Failure> Fail(FailureKind kind, std::string message) {
  return pypto::unexpected<Failure>(Failure{kind, ir::Diagnostic{.message = std::move(message)}});
}

inline pypto::unexpected<Failure> Fail(ir::Diagnostic diagnostic) {
  return pypto::unexpected<Failure>(Failure{FailureKind::Diagnostic, std::move(diagnostic)});
}

}  // namespace pypto::driver
