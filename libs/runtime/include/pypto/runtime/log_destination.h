// Where the runtime's and the simulator's log lines go. Upstream's device logs go where
// $ASCEND_PROCESS_LOG_PATH says; here, when it names an existing directory, spdlog's default logger
// writes to <dir>/pypto-sim-<pid>.log instead of the console.
#pragma once

#include <string>

namespace pypto::rt {

// Follows $ASCEND_PROCESS_LOG_PATH as it is now: set to a directory, the log goes to a file there;
// unset, back to the console logger it replaced. A value that is not an existing directory leaves the
// log where it is and says so on stderr, once per value. Keeps the log level. Cheap when nothing
// changed; thread-safe.
void FollowProcessLogPath();

// The file the log goes to now, or "" for the console.
std::string ProcessLogFile();

}  // namespace pypto::rt
