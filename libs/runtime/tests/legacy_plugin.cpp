// A plugin as ABI 2 laid it out, exporting ABI 2's entry point: the registry must still find it and
// refuse it naming both versions.
#include <cstddef>
#include <cstdint>

namespace {

struct LegacyPlugin {
  uint32_t abi_version;
  const char* name;
  const char* description;
  const char* const* platforms;
};

const char* const kPlatforms[] = {"oldsim", nullptr};
const LegacyPlugin kPlugin = {2, "oldsim", "an ABI 2 plugin", kPlatforms};

}  // namespace

extern "C" __attribute__((visibility("default"))) const LegacyPlugin* pypto_backend_plugin_v1(void) {
  return &kPlugin;
}
