// The plugin's C entry point for the device platforms, a2a3 (Ascend 910B) and a5 (Ascend 950).
// prepare completes the build directory for the device (device_build.h): where ptoas and ccec are
// missing it stops after the artifacts and says so with PYPTO_ERR_UNAVAILABLE. Launching on an NPU
// is the device runtime's part (upstream's simpler loads this directory); this plugin does not, so
// execute always answers PYPTO_ERR_UNAVAILABLE with what to do instead.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <iterator>
#include <string_view>

#include "device_build.h"
#include "device_tools.h"
#include "pypto-c/backend_plugin.h"
#include "pypto/ir/c_api_bridge.h"
#include "pypto/ir/soc.h"
#include "pypto/runtime/c_api_bridge.h"

namespace pypto::ascend {
namespace {

const pypto_platform_desc kPlatforms[] = {
    {.name = "a2a3",
     .kind = PYPTO_PLATFORM_DEVICE,
     .simulates = nullptr,
     .soc = {.table = "Ascend910B"},
     .pto_modules = PYPTO_PTO_REQUIRED,
     .toolchain = "ptoas, ccec (CANN)"},
    {.name = "a5",
     .kind = PYPTO_PLATFORM_DEVICE,
     .simulates = nullptr,
     .soc = {.table = "Ascend950"},
     .pto_modules = PYPTO_PTO_REQUIRED,
     .toolchain = "ptoas, ccec (CANN)"},
};

// The SoC of one of this plugin's platforms, as kPlatforms describes it; null for another name.
const ir::SocSpec* SocOf(std::string_view platform) {
  for (const pypto_platform_desc& desc : kPlatforms)
    if (platform == desc.name) return ir::SocNamed(desc.soc.table);
  return nullptr;
}

pypto_status Prepare(const char* platform, const pypto_ir_program* lowered, const pypto_rt_plan* plan,
                     const char* output_dir) {
  return c_api::Guard([&]() -> pypto_status {
    if (!platform || !lowered || !lowered->program || !plan || !output_dir)
      return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "ascend prepare: null platform, program, plan or output directory");
    const ir::SocSpec* soc = SocOf(platform);
    if (!soc) return c_api::Fail(PYPTO_ERR_NOT_FOUND, fmt::format("ascend: unknown platform '{}'", platform));
    const DeviceTools tools = FindDeviceTools(soc->arch);
    auto report = BuildForDevice(*lowered->program, plan->plan, platform, soc->arch, output_dir, tools);
    if (!report) return c_api::Fail(PYPTO_ERR_COMPILE, fmt::format("ascend ({}): {}", platform, report.error()));
    if (!report->complete()) return c_api::Fail(PYPTO_ERR_UNAVAILABLE, report->Summary());
    spdlog::info("ascend: {}", report->Summary());
    return PYPTO_OK;
  });
}

pypto_status Execute(const char* platform, const pypto_ir_program*, const pypto_rt_plan*, const pypto_chip_tensor*,
                     size_t) {
  const std::string name = platform ? platform : "?";
  return c_api::Fail(
      PYPTO_ERR_UNAVAILABLE,
      fmt::format("platform '{0}' runs on an Ascend NPU, and this pypto does not launch work on one: the build "
                  "directory is what the device runtime (hw-native-sys/simpler) loads on a machine with the NPU "
                  "and its driver. To run here, use the simulator: -p {0}sim (RunConfig(platform=\"{0}sim\"))",
                  name));
}

const pypto_backend_plugin kPlugin{
    .abi_version = PYPTO_BACKEND_PLUGIN_ABI_VERSION,
    .name = "ascend",
    .description = "Ascend NPU builds: ptoas and ccec when found, else the artifacts alone (a2a3, a5)",
    .platforms = kPlatforms,
    .num_platforms = std::size(kPlatforms),
    .prepare = Prepare,
    .execute = Execute,
    .open_session = nullptr,
    .run_session = nullptr,
    .close_session = nullptr,
    .run_session_plan = nullptr,
};

}  // namespace
}  // namespace pypto::ascend

extern "C" __attribute__((visibility("default"))) const pypto_backend_plugin* pypto_backend_plugin_v4(void) {
  return &pypto::ascend::kPlugin;
}
