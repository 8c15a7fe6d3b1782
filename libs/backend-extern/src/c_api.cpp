// libpypto_backend_extern's C ABI: thin wrappers that turn expected<> errors into statuses.
#include "pypto-c/backend_extern.h"

#include <filesystem>
#include <vector>

#include "pypto/backend_extern/cache_key.h"
#include "pypto/backend_extern/source_paths.h"
#include "pypto/ir/c_api_bridge.h"

using namespace pypto;

extern "C" {

const char* pypto_extern_version(void) { return PYPTO_VERSION; }

pypto_status pypto_extern_cache_key(const char* entry, const char* const* include_dirs, size_t n, char** out_hex) {
  return c_api::Guard([&] {
    if (!entry || !out_hex || (n > 0 && !include_dirs)) {
      return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "pypto_extern_cache_key: null argument");
    }
    std::vector<std::filesystem::path> dirs;
    for (size_t i = 0; i < n; ++i) {
      if (!include_dirs[i]) return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "pypto_extern_cache_key: null include dir");
      dirs.emplace_back(include_dirs[i]);
    }
    auto key = backend_extern::CacheKey(entry, dirs);
    if (!key) return c_api::Fail(PYPTO_ERR_NOT_FOUND, key.error());
    *out_hex = c_api::CopyString(*key);
    return PYPTO_OK;
  });
}

pypto_status pypto_extern_resolve_source(const char* path, const char* defining_file, char** out) {
  return c_api::Guard([&] {
    if (!path || !defining_file || !out) {
      return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "pypto_extern_resolve_source: null argument");
    }
    auto resolved = backend_extern::ResolveSource(path, defining_file);
    if (!resolved) return c_api::Fail(PYPTO_ERR_NOT_FOUND, resolved.error());
    *out = c_api::CopyString(resolved->string());
    return PYPTO_OK;
  });
}

}  // extern "C"
