// Adapting ptoas's C++ output for embedding in the kernel wrapper.
#include <regex>
#include <string>

#include "pypto/backend_ptoas/kernel_wrapper.h"

namespace pypto::backend_ptoas {
namespace {

std::string_view Trim(std::string_view line) {
  const auto begin = line.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return {};
  return line.substr(begin, line.find_last_not_of(" \t\r\n") - begin + 1);
}

// Lines the wrapper header already provides, or that must not run per task: the runtime's
// persistent executor sets the FFTS base address once for every task on the core.
bool IsDroppedLine(std::string_view line) {
  std::string_view text = Trim(line);
  if (text.starts_with("#include")) {
    return text.find("pto-inst") != std::string_view::npos || text.find("cstdint") != std::string_view::npos ||
           text.find("tensor.h") != std::string_view::npos;
  }
  return text == "using namespace pto;" || text.starts_with("set_ffts_base_addr(");
}

}  // namespace

std::string PreprocessPtoasOutput(std::string_view ptoas_cpp) {
  std::string kept;
  size_t begin = 0;
  while (begin < ptoas_cpp.size()) {
    size_t end = ptoas_cpp.find('\n', begin);
    size_t next = end == std::string_view::npos ? ptoas_cpp.size() : end + 1;
    std::string_view line = ptoas_cpp.substr(begin, next - begin);
    if (!IsDroppedLine(line)) kept.append(line);
    begin = next;
  }
  // ptoas still calls the runtime's 128-byte descriptor `Tensor`; the runtime now calls it ChipTensor
  // and keeps no alias. Whole words only, so e.g. GlobalTensor is left alone.
  static const std::regex kTensorWord(R"(\bTensor\b)");
  kept = std::regex_replace(kept, kTensorWord, "ChipTensor");
  // The generated function becomes a file-local helper that kernel_entry calls; only kernel_entry
  // is exported.
  static const std::regex kEntryDecl(R"((extern\s*"C"\s*)?(__global__\s+)?AICORE\s+void)");
  kept = std::regex_replace(kept, kEntryDecl, "static __aicore__ void");
  static const std::regex kAicoreWord(R"(\bAICORE\b)");
  return std::regex_replace(kept, kAicoreWord, "__aicore__");
}

}  // namespace pypto::backend_ptoas
