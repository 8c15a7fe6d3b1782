// A minimal backend plugin for the registry tests, built three times (see meson.build): as it should be
// ("testsim", ABI PYPTO_BACKEND_PLUGIN_ABI_VERSION), claiming another backend ABI, and as an ABI 3
// plugin (TEST_PLUGIN_ABI 3, exported as pypto_backend_plugin_v3), which the loader still takes.
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

// Counts as a run too, so that a test can tell which entry the caller took.
pypto_status RunSessionPlan(pypto_backend_session* session, const pypto_rt_plan*, const pypto_chip_tensor*, size_t) {
  if (!session) return PYPTO_ERR_INVALID_ARGUMENT;
  reinterpret_cast<Session*>(session)->runs += 100;
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
    .run_session_plan = RunSessionPlan,  // ignored in the ABI 3 build, whose struct ends before it
};

}  // namespace

#ifndef TEST_PLUGIN_ENTRY
#define TEST_PLUGIN_ENTRY pypto_backend_plugin_v4
#endif

extern "C" __attribute__((visibility("default"))) const pypto_backend_plugin* TEST_PLUGIN_ENTRY(void) {
  return &kPlugin;
}
