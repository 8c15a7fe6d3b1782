// Ctrl-C during a run. While an InterruptibleRun lives, SIGINT asks the runs in flight to stop: the
// runtime's watchdog sees RunInterrupted(), fails the run with FatalCode::Interrupted naming the
// kernels that were running, and asks each to give up (CoreExecutor::Abort), so that a kernel looping
// forever no longer holds the process. The handler first passes the signal on to the one it replaced
// (Python's, which then raises KeyboardInterrupt once the run returns); where that was the default
// action, a second Ctrl-C during the same run ends the process as before. A process that ignores
// SIGINT keeps ignoring it.
#pragma once

namespace pypto::rt {

class InterruptibleRun {
 public:
  InterruptibleRun();   // the first one alive installs the handler and clears the request
  ~InterruptibleRun();  // the last one gone puts the previous handler back
  InterruptibleRun(const InterruptibleRun&) = delete;
  InterruptibleRun& operator=(const InterruptibleRun&) = delete;
};

// Whether SIGINT arrived while an InterruptibleRun was alive (since the first of those now alive began).
bool RunInterrupted();

}  // namespace pypto::rt
