#include "pypto/backend_extern/compile_command.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>

namespace pypto::backend_extern {
namespace {

using Argv = std::vector<std::string>;

// Sets (or clears) an environment variable for one test and restores it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(HostCompileCommand, DefaultCompiler) {
  ScopedEnv cxx("CXX", nullptr);
  ScopedEnv cpu_sim("PYPTO_EXTERN_CPU_SIM", nullptr);
  EXPECT_EQ(HostCompileCommand("/k/entry.cpp", {"/k/inc", "/k/more"}, {"/rt/aicore", "/pto/include"}, "/out/k.so"),
            (Argv{"c++", "-std=c++17", "-O2", "-g1", "-fno-strict-aliasing", "-fvect-cost-model=dynamic", "-fPIC",
                  "-shared", "-I/k/inc", "-I/k/more", "-I/rt/aicore", "-I/pto/include", "/k/entry.cpp", "-o",
                  "/out/k.so"}));
}

TEST(HostCompileCommand, CompilerFromCxxMayCarryALauncher) {
  ScopedEnv cxx("CXX", "ccache g++-15");
  ScopedEnv cpu_sim("PYPTO_EXTERN_CPU_SIM", nullptr);
  EXPECT_EQ(HostCompileCommand("e.cpp", {}, {}, "e.so"),
            (Argv{"ccache", "g++-15", "-std=c++17", "-O2", "-g1", "-fno-strict-aliasing",
                  "-fvect-cost-model=dynamic", "-fPIC", "-shared", "e.cpp", "-o", "e.so"}));
}

// Upstream's __CPU_SIM (kernels swap their device body for an empty one under it) only on request.
TEST(HostCompileCommand, CpuSimMacroOnlyWhenAskedFor) {
  ScopedEnv cxx("CXX", nullptr);
  {
    ScopedEnv cpu_sim("PYPTO_EXTERN_CPU_SIM", "1");
    EXPECT_EQ(HostCompileCommand("e.cpp", {}, {}, "e.so"),
              (Argv{"c++", "-std=c++17", "-O2", "-g1", "-fno-strict-aliasing", "-fvect-cost-model=dynamic", "-fPIC",
                    "-shared", "-D__CPU_SIM", "e.cpp", "-o", "e.so"}));
  }
  ScopedEnv cpu_sim("PYPTO_EXTERN_CPU_SIM", "0");
  for (const auto& arg : HostCompileCommand("e.cpp", {}, {}, "e.so")) EXPECT_NE(arg, "-D__CPU_SIM");
}

Argv CcecTail(const std::string& arch) {
  return {"--cce-aicore-arch=" + arch,
          "-mllvm",
          "-cce-aicore-stack-size=0x8000",
          "-mllvm",
          "-cce-aicore-function-stack-size=0x8000",
          "-mllvm",
          "-cce-aicore-record-overflow=false",
          "-mllvm",
          "-cce-aicore-addr-transform",
          "-mllvm",
          "-cce-aicore-dcci-insert-for-scalar=false",
          "-DMEMORY_BASE"};
}

Argv Concat(Argv head, const Argv& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

const Argv kCcecHead = {"ccec", "-c", "-O3", "-g", "-x", "cce", "-Wall", "-std=c++17", "--cce-aicore-only"};

TEST(CcecCompileCommand, A2A3VectorCore) {
  ScopedEnv home("ASCEND_HOME_PATH", nullptr);
  auto argv = CcecCompileCommand("/k/aiv/entry.cpp", {"/k/inc", "/pto/include"}, "a2a3", "aiv", "/out/k.o");
  ASSERT_TRUE(argv) << argv.error();
  EXPECT_EQ(*argv, Concat(Concat(kCcecHead, CcecTail("dav-c220-vec")),
                          {"-I/k/inc", "-I/pto/include", "-o", "/out/k.o", "/k/aiv/entry.cpp"}));
}

TEST(CcecCompileCommand, A2A3CubeCore) {
  ScopedEnv home("ASCEND_HOME_PATH", nullptr);
  auto argv = CcecCompileCommand("e.cpp", {}, "a2a3", "aic", "e.o");
  ASSERT_TRUE(argv) << argv.error();
  EXPECT_EQ(*argv, Concat(Concat(kCcecHead, CcecTail("dav-c220-cube")), {"-o", "e.o", "e.cpp"}));
}

TEST(CcecCompileCommand, A5AddsLoopAliasAnalysis) {
  ScopedEnv home("ASCEND_HOME_PATH", "/usr/local/Ascend/cann");
  auto argv = CcecCompileCommand("e.cpp", {"/i"}, "a5", "aic", "e.o");
  ASSERT_TRUE(argv) << argv.error();
  Argv head = kCcecHead;
  head[0] = "/usr/local/Ascend/cann/bin/ccec";
  EXPECT_EQ(*argv, Concat(Concat(head, CcecTail("dav-c310-cube")),
                          {"-mllvm", "-cce-vf-aa-between-iters=true", "-I/i", "-o", "e.o", "e.cpp"}));
}

TEST(CcecCompileCommand, RejectsUnknownArchAndCoreType) {
  auto arch = CcecCompileCommand("e.cpp", {}, "a2a3sim", "aiv", "e.o");
  ASSERT_FALSE(arch);
  EXPECT_EQ(arch.error(), "unknown device arch 'a2a3sim' (expected \"a2a3\" or \"a5\")");
  auto core = CcecCompileCommand("e.cpp", {}, "a5", "mixed", "e.o");
  ASSERT_FALSE(core);
  EXPECT_EQ(core.error(), "unknown core type 'mixed' (expected \"aic\" or \"aiv\")");
}

TEST(DeviceMacroFlags, FamilyAndCoreVariantAsCcecDefinesThem) {
  using Flags = std::vector<std::string>;
  EXPECT_EQ(DeviceMacroFlags("a2a3", "aiv").value(), (Flags{"-D__DAV_C220__", "-D__DAV_C220_VEC__"}));
  EXPECT_EQ(DeviceMacroFlags("a2a3", "aic").value(), (Flags{"-D__DAV_C220__", "-D__DAV_C220_CUBE__"}));
  EXPECT_EQ(DeviceMacroFlags("a5", "aiv").value(), (Flags{"-D__DAV_C310__", "-D__DAV_C310_VEC__"}));
  EXPECT_EQ(DeviceMacroFlags("a5", "aic").value(), (Flags{"-D__DAV_C310__", "-D__DAV_C310_CUBE__"}));
  EXPECT_EQ(DeviceMacroFlags("a3", "aiv").error(), "unknown device arch 'a3' (expected \"a2a3\" or \"a5\")");
}

}  // namespace
}  // namespace pypto::backend_extern
