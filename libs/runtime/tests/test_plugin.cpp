// A minimal backend plugin for the registry tests, built twice (see meson.build): once as it should be
// ("testsim", ABI PYPTO_BACKEND_PLUGIN_ABI_VERSION) and once claiming another backend ABI.
#include "pypto-c/backend_plugin.h"

namespace {

const char* const kPlatforms[] = {TEST_PLUGIN_PLATFORM, nullptr};

pypto_status Prepare(const char*, const pypto_ir_program*, const pypto_rt_plan*, const char*) { return PYPTO_OK; }

pypto_status Execute(const char*, const pypto_ir_program*, const pypto_rt_plan*, const pypto_chip_tensor*, size_t) {
  return PYPTO_OK;
}

const pypto_backend_plugin kPlugin = {
    .abi_version = TEST_PLUGIN_ABI,
    .name = TEST_PLUGIN_NAME,
    .description = "test plugin for libpypto_runtime's registry tests",
    .platforms = kPlatforms,
    .prepare = Prepare,
    .execute = Execute,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const pypto_backend_plugin* pypto_backend_plugin_v1(void) {
  return &kPlugin;
}
