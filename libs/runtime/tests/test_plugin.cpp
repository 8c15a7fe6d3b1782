// A minimal backend plugin for the registry tests, built twice (see meson.build): once as it should be
// ("testsim", ABI PYPTO_BACKEND_PLUGIN_ABI_VERSION) and once claiming another backend ABI.
#include "pypto-c/backend_plugin.h"

namespace {

const pypto_platform_desc kPlatforms[] = {
    {.name = TEST_PLUGIN_PLATFORM,
     .kind = PYPTO_PLATFORM_SIMULATOR,
     .simulates = nullptr,
     .soc = {.table = "Ascend950"},
     .pto_modules = PYPTO_PTO_NONE,
     .toolchain = nullptr},
};

pypto_status Prepare(const char*, const pypto_ir_program*, const pypto_rt_plan*, const char*) { return PYPTO_OK; }

pypto_status Execute(const char*, const pypto_ir_program*, const pypto_rt_plan*, const pypto_chip_tensor*, size_t) {
  return PYPTO_OK;
}

// A session counts its runs; the registry tests read the count back through run_session's status.
struct Session {
  size_t runs = 0;
};

pypto_status OpenSession(const char*, const pypto_ir_program*, const pypto_rt_plan*, pypto_backend_session** out) {
  if (!out) return PYPTO_ERR_INVALID_ARGUMENT;
  *out = reinterpret_cast<pypto_backend_session*>(new Session());
  return PYPTO_OK;
}

pypto_status RunSession(pypto_backend_session* session, const pypto_chip_tensor*, size_t) {
  if (!session) return PYPTO_ERR_INVALID_ARGUMENT;
  ++reinterpret_cast<Session*>(session)->runs;
  return PYPTO_OK;
}

void CloseSession(pypto_backend_session* session) { delete reinterpret_cast<Session*>(session); }

const pypto_backend_plugin kPlugin = {
    .abi_version = TEST_PLUGIN_ABI,
    .name = TEST_PLUGIN_NAME,
    .description = "test plugin for libpypto_runtime's registry tests",
    .platforms = kPlatforms,
    .num_platforms = 1,
    .prepare = Prepare,
    .execute = Execute,
    .open_session = OpenSession,
    .run_session = RunSession,
    .close_session = CloseSession,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const pypto_backend_plugin* pypto_backend_plugin_v3(void) {
  return &kPlugin;
}
