// The device build with stand-in tools: shell scripts in place of ptoas and ccec that record how
// they were called and write what the real ones would, and header trees in place of pto-isa and the
// runtime. No device toolchain is needed, and each missing tool is tested by leaving it out.
#include "device_build.h"

#include <gtest/gtest.h>

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "pypto/backend_ptoas/module.h"
#include "pypto/codegen_orch/orchestration.h"
#include "pypto/passes/pipeline.h"
#include "sample_programs.h"

namespace pypto::ascend {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteExecutable(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
  fs::permissions(path, fs::perms::owner_all, fs::perm_options::add);
}

// A ptoas that logs its arguments and writes the kernel function the wrapper calls.
constexpr const char* kFakePtoas = R"(#!/bin/sh
echo "$@" >> "$(dirname "$0")/ptoas.log"
out=""; prev=""
for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done
printf '#include "pto/pto-inst.hpp"\nusing namespace pto;\nAICORE void tile_add_incore_0(__gm__ float* a, __gm__ float* b, __gm__ float* c) {}\n' > "$out"
)";

// A ccec that logs its arguments and writes the object named by -o.
constexpr const char* kFakeCcec = R"(#!/bin/sh
echo "$@" >> "$(dirname "$0")/ccec.log"
out=""; prev=""
for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done
echo object > "$out"
)";

class DeviceBuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / fmt::format("pypto-ascend-test-{}-{}", getpid(),
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    out_ = root_ / "build";
    fs::create_directories(out_);
    auto lowered = passes::Lower(testing::TileAddProgram(16, 16), passes::PassContext{});
    ASSERT_TRUE(lowered) << lowered.error().str();
    lowered_ = *lowered;
    auto orchestration = codegen_orch::GenerateOrchestration(*lowered_);
    ASSERT_TRUE(orchestration) << orchestration.error().str();
    plan_ = orchestration->plan;
    ASSERT_TRUE(codegen_orch::WriteOrchestration(*orchestration, out_.string()));
    // What the frontend writes for each generated kernel before the plugin runs.
    for (const auto& kernel : plan_.kernels) {
      auto module = backend_ptoas::EmitModule(*lowered_->Find(kernel.name), "a2a3");
      ASSERT_TRUE(module) << module.error();
      fs::create_directories(out_ / "kernels" / "aiv");
      std::ofstream(out_ / "kernels" / "aiv" / (kernel.name + ".pto")) << *module;
    }
  }
  void TearDown() override { fs::remove_all(root_); }

  // Every tool and header set present, as stand-ins under root_/tools.
  DeviceTools AllTools() {
    const fs::path tools = root_ / "tools";
    WriteExecutable(tools / "ptoas", kFakePtoas);
    WriteExecutable(tools / "ccec", kFakeCcec);
    DeviceTools found;
    found.ptoas = {.what = "ptoas", .path = tools / "ptoas"};
    found.ccec = {.what = "ccec", .path = tools / "ccec"};
    found.pto_isa = {.what = "pto-isa headers", .path = tools / "pto-isa", .include_dirs = {tools / "pto-isa/include"}};
    found.runtime_headers = {.what = "runtime kernel headers", .path = tools / "simpler",
                             .include_dirs = {tools / "simpler/common"}};
    return found;
  }

  static DeviceTools NoTools() {
    DeviceTools none;
    none.ptoas = {.what = "ptoas", .hint = "set PTOAS"};
    none.ccec = {.what = "ccec", .hint = "set ASCEND_HOME_PATH"};
    none.pto_isa = {.what = "pto-isa headers", .hint = "set PTO_ISA_ROOT"};
    none.runtime_headers = {.what = "runtime kernel headers", .hint = "set SIMPLER_ROOT"};
    return none;
  }

  pypto::expected<DeviceBuildReport, std::string> Build(const DeviceTools& tools, DeviceBuildOptions options = {}) {
    return BuildForDevice(*lowered_, plan_, "a2a3", "a2a3", out_, tools, options);
  }

  fs::path root_, out_;
  ir::ProgramPtr lowered_;
  rt::TaskPlan plan_;
};

TEST_F(DeviceBuildTest, WithoutToolsTheArtifactsStayAndTheReportSaysWhatIsMissing) {
  auto report = Build(NoTools());
  ASSERT_TRUE(report) << report.error();
  EXPECT_FALSE(report->complete());
  EXPECT_EQ(report->written, (std::vector<std::string>{"orchestration/tile_add.cpp", "kernel_config.py",
                                                        "kernels/aiv/tile_add_incore_0.pto"}));
  EXPECT_TRUE(report->built.empty());
  EXPECT_EQ(report->missing, (std::vector<std::string>{
                                 "ptoas: not found (set PTOAS); 1 PTO module(s) were not assembled into kernel C++"}));
  EXPECT_FALSE(fs::exists(out_ / "kernels/aiv/tile_add_incore_0.cpp"));
  auto json = nlohmann::json::parse(Read(out_ / kDeviceBuildReportFile));
  EXPECT_EQ(json["platform"], "a2a3");
  EXPECT_EQ(json["complete"], false);
  EXPECT_EQ(json["missing"].size(), 1u);
  EXPECT_EQ(report->Summary(),
            fmt::format("platform 'a2a3': {} holds 3 file(s) for the device build (the orchestration C++, "
                        "kernel_config.py, 1 PTO module(s), the kernels' ccec commands); no kernel object was built.\n"
                        "  missing: ptoas: not found (set PTOAS); 1 PTO module(s) were not assembled into kernel C++\n"
                        "  (the full list is in {})",
                        out_.string(), (out_ / kDeviceBuildReportFile).string()));
}

TEST_F(DeviceBuildTest, WithEveryToolEachKernelIsAssembledWrappedAndCompiled) {
  auto report = Build(AllTools());
  ASSERT_TRUE(report) << report.error();
  EXPECT_TRUE(report->complete()) << report->Summary();
  EXPECT_EQ(report->built, std::vector<std::string>{"kernels/aiv/tile_add_incore_0.o"});
  const fs::path tools = root_ / "tools";
  const fs::path kernel = out_ / "kernels/aiv/tile_add_incore_0";
  EXPECT_EQ(Read(tools / "ptoas.log"), fmt::format("{}.pto -o {}.ptoas.cpp --enable-insert-sync --pto-level=level3 "
                                                   "--pto-arch a3\n",
                                                   kernel.string(), kernel.string()));
  const std::string wrapper = Read(kernel.string() + ".cpp");
  EXPECT_NE(wrapper.find("static __aicore__ void tile_add_incore_0(__gm__ float* a"), std::string::npos) << wrapper;
  EXPECT_NE(wrapper.find("extern \"C\" __aicore__ void kernel_entry(__gm__ int64_t* args)"), std::string::npos);
  // ptoas's own include and using-directive are dropped: the wrapper's header has them once.
  EXPECT_EQ(wrapper.find("using namespace pto;"), wrapper.rfind("using namespace pto;"));
  EXPECT_EQ(wrapper.find("pto/pto-inst.hpp"), wrapper.rfind("pto/pto-inst.hpp"));
  // The runtime's include order: pto-isa, then its own headers.
  const std::string ccec = Read(tools / "ccec.log");
  EXPECT_NE(ccec.find("--cce-aicore-arch=dav-c220-vec"), std::string::npos) << ccec;
  EXPECT_NE(ccec.find(fmt::format("-I{0}/pto-isa/include -I{0}/simpler/common -o {1}.o {1}.cpp", tools.string(),
                                  kernel.string())),
            std::string::npos)
      << ccec;
  EXPECT_TRUE(fs::exists(kernel.string() + ".ccec.sh"));
  EXPECT_EQ(nlohmann::json::parse(Read(out_ / kDeviceBuildReportFile))["complete"], true);
}

TEST_F(DeviceBuildTest, WithPtoasButNoCcecTheKernelCppAndItsCommandAreWritten) {
  DeviceTools tools = AllTools();
  tools.ccec = NoTools().ccec;
  auto report = Build(tools);
  ASSERT_TRUE(report) << report.error();
  EXPECT_EQ(report->missing, (std::vector<std::string>{
                                 "ccec: not found (set ASCEND_HOME_PATH); 1 kernel(s) were not compiled; each has its "
                                 ".ccec.sh"}));
  EXPECT_TRUE(fs::exists(out_ / "kernels/aiv/tile_add_incore_0.cpp"));
  const std::string script = Read(out_ / "kernels/aiv/tile_add_incore_0.ccec.sh");
  EXPECT_TRUE(script.starts_with("#!/bin/sh\n# Compiles kernel 'tile_add_incore_0' for a2a3 (aiv).\nexec ")) << script;
}

TEST_F(DeviceBuildTest, WithoutKernelHeadersTheGeneratedKernelIsNotCompiled) {
  DeviceTools tools = AllTools();
  tools.pto_isa = NoTools().pto_isa;
  auto report = Build(tools);
  ASSERT_TRUE(report) << report.error();
  EXPECT_EQ(report->missing, (std::vector<std::string>{
                                 "pto-isa headers: not found (set PTO_ISA_ROOT); needed to compile 1 generated "
                                 "kernel(s)"}));
  EXPECT_TRUE(report->built.empty());
}

TEST_F(DeviceBuildTest, APtoasFailureNamesTheKernelTheCommandAndItsOutput) {
  DeviceTools tools = AllTools();
  WriteExecutable(root_ / "tools/ptoas", "#!/bin/sh\necho 'tile_add_incore_0.pto:7:3: error: unknown op' >&2\nexit 1\n");
  auto report = Build(tools);
  ASSERT_FALSE(report);
  EXPECT_TRUE(report.error().starts_with("kernel 'tile_add_incore_0': ptoas failed (exit code 1):\n"
                                         "tile_add_incore_0.pto:7:3: error: unknown op\n\ncommand: "))
      << report.error();
}

TEST_F(DeviceBuildTest, APtoasThatHangsIsStoppedAtItsTimeLimit) {
  DeviceTools tools = AllTools();
  WriteExecutable(root_ / "tools/ptoas", "#!/bin/sh\nexec sleep 30\n");
  auto report = Build(tools, {.ptoas_timeout = 2s});
  ASSERT_FALSE(report);
  EXPECT_TRUE(report.error().starts_with("kernel 'tile_add_incore_0': ptoas did not finish within 2 s and was stopped"))
      << report.error();
}

TEST_F(DeviceBuildTest, AMissingModuleIsAnError) {
  fs::remove(out_ / "kernels/aiv/tile_add_incore_0.pto");
  auto report = Build(NoTools());
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error(), fmt::format("kernel 'tile_add_incore_0': {} was not written",
                                        (out_ / "kernels/aiv/tile_add_incore_0.pto").string()));
}

}  // namespace
}  // namespace pypto::ascend
