#include <cstdlib>
#include <sstream>

#include "pypto/backend_extern/compile_command.h"

namespace pypto::backend_extern {
namespace {

// $CXX may carry a launcher ("ccache g++"), so it is split into words like build tools do.
std::vector<std::string> HostCompiler() {
  std::vector<std::string> words;
  if (const char* cxx = std::getenv("CXX")) {
    std::istringstream in(cxx);
    for (std::string word; in >> word;) words.push_back(word);
  }
  if (words.empty()) words.push_back("c++");
  return words;
}

}  // namespace

std::vector<std::string> HostCompileCommand(const std::filesystem::path& source,
                                            const std::vector<std::filesystem::path>& include_dirs,
                                            const std::vector<std::filesystem::path>& runtime_include_dirs,
                                            const std::filesystem::path& output_so) {
  std::vector<std::string> argv = HostCompiler();
  // __CPU_SIM switches pto-isa and the runtime headers to their host implementations.
  for (const char* flag : {"-std=c++17", "-O2", "-fPIC", "-shared", "-D__CPU_SIM"}) argv.emplace_back(flag);
  for (const auto& dir : include_dirs) argv.push_back("-I" + dir.string());
  for (const auto& dir : runtime_include_dirs) argv.push_back("-I" + dir.string());
  argv.push_back(source.string());
  argv.emplace_back("-o");
  argv.push_back(output_so.string());
  return argv;
}

}  // namespace pypto::backend_extern
