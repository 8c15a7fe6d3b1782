#include "pypto/runtime/log_destination.h"

#include <fmt/format.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <vector>

#include <unistd.h>

namespace pypto::rt {
namespace {

struct State {
  std::mutex mu;
  std::string env;   // the value last acted on
  std::string file;  // where the log goes now; "" for the console
  std::shared_ptr<spdlog::logger> console;  // the default logger before the first switch to a file
  // Every logger replaced, kept alive: a thread of another session may still be logging through the
  // raw pointer spdlog::info(...) took before the switch. One per change of the variable.
  std::vector<std::shared_ptr<spdlog::logger>> replaced;
};

State& GetState() {
  static State* state = new State();  // never destroyed: logging may outlive static destruction
  return *state;
}

// Replaces the default logger, keeping its level, so that every spdlog::info(...) follows.
void Install(State& state, std::shared_ptr<spdlog::logger> logger) {
  logger->set_level(spdlog::default_logger()->level());
  state.replaced.push_back(spdlog::default_logger());
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace

void FollowProcessLogPath() {
  const char* value = std::getenv("ASCEND_PROCESS_LOG_PATH");
  const std::string env = value ? value : "";
  State& state = GetState();
  std::lock_guard lock(state.mu);
  if (env == state.env) return;
  state.env = env;
  std::error_code ec;
  if (env.empty() || !std::filesystem::is_directory(env, ec)) {
    if (!state.file.empty()) Install(state, state.console);
    state.file.clear();
    // On stderr whatever the log level and wherever the console logger writes: the user asked for a file.
    if (!env.empty())
      fmt::print(stderr,
                 "pypto: ASCEND_PROCESS_LOG_PATH='{}' is not an existing directory; the log stays on the console\n",
                 env);
    return;
  }
  const std::string file = (std::filesystem::path(env) / fmt::format("pypto-sim-{}.log", getpid())).string();
  try {
    auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(file, /*truncate=*/false);
    auto logger = std::make_shared<spdlog::logger>("pypto", std::move(sink));
    logger->flush_on(spdlog::level::trace);  // a crash must not lose the lines before it
    if (state.file.empty()) state.console = spdlog::default_logger();
    Install(state, std::move(logger));
    state.file = file;
  } catch (const spdlog::spdlog_ex& e) {
    fmt::print(stderr, "pypto: ASCEND_PROCESS_LOG_PATH: cannot open {}: {}; the log stays on the console\n", file,
               e.what());
  }
}

std::string ProcessLogFile() {
  State& state = GetState();
  std::lock_guard lock(state.mu);
  return state.file;
}

}  // namespace pypto::rt
