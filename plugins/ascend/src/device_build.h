// The device half of a build directory: each generated kernel's PTO module assembled by ptoas into
// C++, wrapped with its kernel_entry, and every kernel (generated or hand-written) compiled by ccec.
// A step whose tool this machine lacks is skipped and recorded, so the directory always holds what
// could be made, and the report says what is missing and how to supply it.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "device_tools.h"
#include "pypto/support/expected.h"

namespace pypto::ir {
class Program;
}  // namespace pypto::ir
namespace pypto::rt {
struct TaskPlan;
}  // namespace pypto::rt

namespace pypto::ascend {

struct DeviceBuildReport {
  std::string platform;
  std::filesystem::path output_dir;
  std::vector<std::string> written;  // files in the directory, relative to it
  std::vector<std::string> built;    // kernel objects ccec produced, relative
  std::vector<std::string> missing;  // one line per tool this build needed and did not find

  bool complete() const { return missing.empty(); }
  // Several lines: what the directory holds, what was built, and what is missing.
  std::string Summary() const;
};

// The name of the report file in a build directory (JSON: platform, complete, written, built, missing,
// and the summary text).
inline constexpr const char* kDeviceBuildReportFile = "device_build.json";

struct DeviceBuildOptions {
  std::chrono::milliseconds ptoas_timeout = std::chrono::seconds(60);  // as upstream runs it
  std::chrono::milliseconds ccec_timeout = std::chrono::seconds(600);
};

// Builds every kernel of `plan` into `output_dir` (which already holds the orchestration, the
// manifest and each generated kernel's kernels/<core>/<name>.pto) and writes the report file. Fails
// when a tool that was found rejects its input: the message names the kernel, the command and its
// output.
pypto::expected<DeviceBuildReport, std::string> BuildForDevice(const ir::Program& lowered, const rt::TaskPlan& plan,
                                                               std::string_view platform, std::string_view arch,
                                                               const std::filesystem::path& output_dir,
                                                               const DeviceTools& tools,
                                                               const DeviceBuildOptions& options = {});

}  // namespace pypto::ascend
