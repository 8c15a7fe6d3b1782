#include "fault_location.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <ucontext.h>

#include <chrono>
#include <sstream>
#include <vector>

#include "pypto/backend_extern/run_command.h"

namespace pypto::sim {

uintptr_t InstructionAddressOf(const void* signal_context) {
  if (!signal_context) return 0;
  const auto* context = static_cast<const ucontext_t*>(signal_context);
#if defined(__x86_64__)
  return static_cast<uintptr_t>(context->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return static_cast<uintptr_t>(context->uc_mcontext.pc);
#else
  (void)context;
  return 0;
#endif
}

std::optional<std::string> SourceLocationOf(uintptr_t instruction) {
  Dl_info info{};
  if (instruction == 0 || dladdr(reinterpret_cast<void*>(instruction), &info) == 0 || !info.dli_fname ||
      !info.dli_fbase)
    return std::nullopt;
  // A shared library's debug information is addressed from its load base.
  const uintptr_t offset = instruction - reinterpret_cast<uintptr_t>(info.dli_fbase);
  const std::vector<std::string> argv = {"addr2line", "-f", "-C", "-e", info.dli_fname, fmt::format("{:#x}", offset)};
  auto result = backend_extern::RunCommand(argv, std::chrono::seconds(10));
  if (!result || result->exit_code != 0 || result->timed_out) return std::nullopt;
  std::istringstream lines(result->output);
  std::string function, file_line;
  if (!std::getline(lines, function) || !std::getline(lines, file_line)) return std::nullopt;
  // "??:0" or "FILE:?" when the library has no line table for the address.
  if (file_line.starts_with("??") || file_line.ends_with(":?") || file_line.ends_with(":0")) return std::nullopt;
  // addr2line appends " (discriminator N)" to some lines.
  if (const size_t space = file_line.find(' '); space != std::string::npos) file_line.resize(space);
  if (function.empty() || function == "??") return file_line;
  return fmt::format("{}, in {}", file_line, function);
}

}  // namespace pypto::sim
