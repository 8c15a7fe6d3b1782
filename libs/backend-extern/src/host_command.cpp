#include <cstdlib>
#include <string_view>

#include "pypto/backend_extern/compile_command.h"
#include "pypto/support/host_compiler.h"

namespace pypto::backend_extern {
namespace {

std::vector<std::string> HostCompileFlags() {
  // GCC's -O2 only vectorizes loops whose trip count it knows; the kernel libraries' tile loops run over
  // a valid region known at run time, and the dynamic cost model vectorizes them (about 1.8x on
  // element-wise chains).
  // Kernels pun types through pointers as a matter of course (a struct copied out word by word through a
  // uint32_t*, as pypto-lib's paged-attention tiler writes its tiling); under GCC's strict aliasing such a
  // copy may drop a float member's store, so the host build, like the kernels' authors, assumes none.
  // -g1 (line tables only, cheap to build): a kernel that crashes is reported with its source line
  // (the simulator's fault_location.h).
  std::vector<std::string> flags = {"-std=c++17", "-O2", "-g1", "-fno-strict-aliasing", "-fvect-cost-model=dynamic",
                                    "-fPIC", "-shared"};
  // Upstream's simulator defines __CPU_SIM because it cannot run device code: kernels test it to swap
  // their body for an empty one (pypto-lib's paged-attention CCE kernel does). The simulator's include
  // path implements the device's interfaces (AscendC, pto-isa, the CCE builtins), so by default a
  // kernel is compiled as the device compiler sees it; PYPTO_EXTERN_CPU_SIM=1 brings upstream's macro back.
  if (const char* cpu_sim = std::getenv("PYPTO_EXTERN_CPU_SIM"); cpu_sim && std::string_view(cpu_sim) == "1")
    flags.emplace_back("-D__CPU_SIM");
  return flags;
}

}  // namespace

std::vector<std::string> HostCompileCommand(const std::filesystem::path& source,
                                            const std::vector<std::filesystem::path>& include_dirs,
                                            const std::vector<std::filesystem::path>& runtime_include_dirs,
                                            const std::filesystem::path& output_so) {
  std::vector<std::string> argv = pypto::HostCompiler();
  for (auto& flag : HostCompileFlags()) argv.push_back(std::move(flag));
  for (const auto& dir : include_dirs) argv.push_back("-I" + dir.string());
  for (const auto& dir : runtime_include_dirs) argv.push_back("-I" + dir.string());
  argv.push_back(source.string());
  argv.emplace_back("-o");
  argv.push_back(output_so.string());
  return argv;
}

}  // namespace pypto::backend_extern
