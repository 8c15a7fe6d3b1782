// Runs a command line (argv, no shell) and collects what it printed: how the simulator calls the host
// compiler and the device build calls ptoas and ccec.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "pypto/support/expected.h"

namespace pypto::backend_extern {

struct CommandResult {
  int exit_code = -1;      // the exit status, or 128 + signal
  std::string output;      // stdout and stderr, interleaved
  bool timed_out = false;  // killed (SIGKILL) after the time limit
};

// Fails only when the command cannot be started (a missing program is exit code 127 instead). A
// command still running after `timeout` (zero: no limit) is killed and reported as timed out.
pypto::expected<CommandResult, std::string> RunCommand(const std::vector<std::string>& argv,
                                                       std::chrono::milliseconds timeout = {});

}  // namespace pypto::backend_extern
