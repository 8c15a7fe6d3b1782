/* A plugin as ABI 2 laid it out, exporting ABI 2's entry point: the registry must still find it and
 * refuse it naming both versions. Written in C, as plugins are: the registry calls the entry through
 * its own declaration of ABI 2's head, which a C++ definition with another struct type would make
 * a call through a mismatched function type (UBSan's -fsanitize=function, ./dev sanitize). */
#include <stdint.h>

struct LegacyPlugin {
  uint32_t abi_version;
  const char* name;
  const char* description;
  const char* const* platforms;
};

static const char* const kPlatforms[] = {"oldsim", 0};
static const struct LegacyPlugin kPlugin = {2, "oldsim", "an ABI 2 plugin", kPlatforms};

__attribute__((visibility("default"))) const struct LegacyPlugin* pypto_backend_plugin_v1(void) { return &kPlugin; }
