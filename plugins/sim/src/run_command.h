// Runs a command line (argv, no shell) and collects what it printed, for calling the host compiler.
#pragma once

#include <string>
#include <vector>

#include "pypto/support/expected.h"

namespace pypto::sim {

struct CommandResult {
  int exit_code = -1;  // the exit status, or 128 + signal
  std::string output;  // stdout and stderr, interleaved
};

// Fails only when the command cannot be started (a missing program is exit code 127 instead).
pypto::expected<CommandResult, std::string> RunCommand(const std::vector<std::string>& argv);

}  // namespace pypto::sim
