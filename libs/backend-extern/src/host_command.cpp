#include "pypto/backend_extern/compile_command.h"
#include "pypto/support/host_compiler.h"

namespace pypto::backend_extern {

std::vector<std::string> HostCompileCommand(const std::filesystem::path& source,
                                            const std::vector<std::filesystem::path>& include_dirs,
                                            const std::vector<std::filesystem::path>& runtime_include_dirs,
                                            const std::filesystem::path& output_so) {
  std::vector<std::string> argv = pypto::HostCompiler();
  // __CPU_SIM switches pto-isa and the runtime headers to their host implementations. GCC's -O2 only
  // vectorizes loops whose trip count it knows; the kernel libraries' tile loops run over a valid region
  // known at run time, and the dynamic cost model vectorizes them (about 1.8x on element-wise chains).
  for (const char* flag : {"-std=c++17", "-O2", "-fvect-cost-model=dynamic", "-fPIC", "-shared", "-D__CPU_SIM"})
    argv.emplace_back(flag);
  for (const auto& dir : include_dirs) argv.push_back("-I" + dir.string());
  for (const auto& dir : runtime_include_dirs) argv.push_back("-I" + dir.string());
  argv.push_back(source.string());
  argv.emplace_back("-o");
  argv.push_back(output_so.string());
  return argv;
}

}  // namespace pypto::backend_extern
