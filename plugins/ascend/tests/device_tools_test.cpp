// Tool lookup follows the documented variables first, then PATH, and says how to point at a tool.
#include "device_tools.h"

#include <gtest/gtest.h>

#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

namespace pypto::ascend {
namespace {

namespace fs = std::filesystem;

// Sets variables for one test and restores them after it.
class ScopedEnv {
 public:
  void Set(const std::string& name, const std::optional<std::string>& value) {
    if (!saved_.contains(name)) {
      const char* old = std::getenv(name.c_str());
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    if (value) setenv(name.c_str(), value->c_str(), 1);
    else unsetenv(name.c_str());
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) {
      if (value) setenv(name.c_str(), value->c_str(), 1);
      else unsetenv(name.c_str());
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

class DeviceToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / fmt::format("pypto-ascend-tools-{}-{}", getpid(),
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(root_ / "empty");
    for (const char* name : {"PTOAS", "PTOAS_ROOT", "ASCEND_HOME_PATH", "PTO_ISA_ROOT", "SIMPLER_ROOT"})
      env_.Set(name, std::nullopt);
    env_.Set("PATH", (root_ / "empty").string());
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path Executable(const fs::path& relative) {
    const fs::path path = root_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << "#!/bin/sh\n";
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::add);
    return path;
  }
  void Header(const fs::path& relative) {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << "\n";
  }

  fs::path root_;
  ScopedEnv env_;
};

TEST_F(DeviceToolsTest, NothingFoundSaysHowToPointAtEachTool) {
  const DeviceTools tools = FindDeviceTools("a2a3");
  EXPECT_FALSE(tools.ptoas.found());
  EXPECT_EQ(tools.ptoas.hint, "set PTOAS to the ptoas binary or PTOAS_ROOT to its install, or put ptoas on PATH");
  EXPECT_FALSE(tools.ccec.found());
  EXPECT_EQ(tools.ccec.hint, "set ASCEND_HOME_PATH to the CANN toolkit (its bin/ccec), or put ccec on PATH");
  EXPECT_FALSE(tools.pto_isa.found());
  EXPECT_FALSE(tools.runtime_headers.found());
}

TEST_F(DeviceToolsTest, PtoasComesFromPtoasThenPtoasRootThenPath) {
  env_.Set("PATH", (root_ / "path").string());
  const fs::path on_path = Executable("path/ptoas");
  EXPECT_EQ(FindDeviceTools("a2a3").ptoas.path, on_path);
  env_.Set("PTOAS_ROOT", (root_ / "install").string());
  const fs::path in_root = Executable("install/bin/ptoas");
  EXPECT_EQ(FindDeviceTools("a2a3").ptoas.path, in_root);
  const fs::path explicit_path = Executable("mine/ptoas-0.57");
  env_.Set("PTOAS", explicit_path.string());
  EXPECT_EQ(FindDeviceTools("a2a3").ptoas.path, explicit_path);
  env_.Set("PTOAS", (root_ / "nowhere").string());
  const DeviceTools tools = FindDeviceTools("a2a3");
  EXPECT_FALSE(tools.ptoas.found());  // an explicit choice is not second-guessed
  EXPECT_EQ(tools.ptoas.hint, fmt::format("PTOAS={} is not an executable file", (root_ / "nowhere").string()));
}

TEST_F(DeviceToolsTest, CcecComesFromAscendHomePath) {
  env_.Set("ASCEND_HOME_PATH", (root_ / "cann").string());
  EXPECT_EQ(FindDeviceTools("a5").ccec.hint, fmt::format("ASCEND_HOME_PATH={} has no executable bin/ccec",
                                                          (root_ / "cann").string()));
  const fs::path ccec = Executable("cann/bin/ccec");
  EXPECT_EQ(FindDeviceTools("a5").ccec.path, ccec);
}

TEST_F(DeviceToolsTest, KernelHeadersComeFromPtoIsaRootAndSimplerRootForTheArch) {
  env_.Set("PTO_ISA_ROOT", (root_ / "pto-isa").string());
  env_.Set("SIMPLER_ROOT", (root_ / "simpler").string());
  Header("pto-isa/include/pto/pto-inst.hpp");
  Header("simpler/src/common/task_interface/tensor.h");
  Header("simpler/src/a5/runtime/tensormap_and_ringbuffer/common/intrinsic.h");
  const DeviceTools a5 = FindDeviceTools("a5");
  EXPECT_EQ(a5.pto_isa.include_dirs, (std::vector<fs::path>{root_ / "pto-isa/include", root_ / "pto-isa/include/pto"}));
  EXPECT_EQ(a5.runtime_headers.include_dirs,
            (std::vector<fs::path>{root_ / "simpler/src/common/task_interface",
                                   root_ / "simpler/src/a5/runtime/tensormap_and_ringbuffer/common",
                                   root_ / "simpler/src/common/platform/include"}));
  EXPECT_FALSE(FindDeviceTools("a2a3").runtime_headers.found());  // no a2a3 intrinsic.h in this tree
}

}  // namespace
}  // namespace pypto::ascend
