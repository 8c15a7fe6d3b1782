#include "pypto/backend_extern/run_command.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <optional>

extern char** environ;

namespace pypto::backend_extern {
namespace {

using Clock = std::chrono::steady_clock;

// Reads the child's output until it closes the pipe or the deadline passes; false on the deadline.
bool ReadUntilClosed(int fd, std::string& output, std::optional<Clock::time_point> deadline) {
  char buffer[4096];
  for (;;) {
    int wait_ms = -1;
    if (deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      if (left <= 0) return false;
      wait_ms = static_cast<int>(std::min<long long>(left, 1000 * 60 * 60));
    }
    pollfd readable{.fd = fd, .events = POLLIN, .revents = 0};
    const int ready = poll(&readable, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;  // the loop rechecks the deadline
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    output.append(buffer, static_cast<size_t>(n));
  }
}

}  // namespace

pypto::expected<CommandResult, std::string> RunCommand(const std::vector<std::string>& argv,
                                                       std::chrono::milliseconds timeout) {
  if (argv.empty()) return pypto::unexpected(std::string("empty command line"));
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return pypto::unexpected(fmt::format("pipe: {}", std::strerror(errno)));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (spawned != 0) {
    close(pipe_fds[0]);
    return CommandResult{.exit_code = 127, .output = fmt::format("cannot run '{}': {}", argv[0], std::strerror(spawned))};
  }
  CommandResult result;
  std::optional<Clock::time_point> deadline;
  if (timeout.count() > 0) deadline = Clock::now() + timeout;
  if (!ReadUntilClosed(pipe_fds[0], result.output, deadline)) {
    kill(pid, SIGKILL);
    result.timed_out = true;
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace pypto::backend_extern
