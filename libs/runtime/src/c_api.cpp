// libpypto_runtime's C ABI. Every function that can fail runs under c_api::Guard, so no C++
// exception crosses into C; arguments are checked here so callers get a status, not a throw.
#include <mutex>
#include <set>
#include <span>
#include <string>

#include "pypto-c/runtime.h"
#include "pypto/ir/c_api_bridge.h"
#include "pypto/runtime/backend_registry.h"
#include "pypto/runtime/chip_tensor.h"

using namespace pypto;

namespace {

// A copy of `text` that lives as long as the process, for the strings a C caller is handed.
const char* Interned(const std::string& text) {
  static std::mutex mutex;
  static std::set<std::string> strings;
  std::lock_guard lock(mutex);
  return strings.insert(text).first->c_str();
}

}  // namespace

extern "C" {

const char* pypto_runtime_version(void) { return PYPTO_VERSION; }

size_t pypto_rt_dtype_size(uint8_t dtype) { return rt::ElementSize(dtype); }

pypto_status pypto_rt_make_external_tensor(void* data, const uint32_t* shape, uint32_t ndims, uint8_t dtype,
                                           pypto_chip_tensor* out) {
  return c_api::Guard([&] {
    if (!data || !shape || !out)
      return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "pypto_rt_make_external_tensor: null argument");
    if (ndims < 1 || ndims > PYPTO_MAX_TENSOR_DIMS)
      return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "pypto_rt_make_external_tensor: ndims " +
                                                         std::to_string(ndims) + " is not in 1..5");
    if (rt::ElementSize(dtype) == 0)
      return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT,
                         "pypto_rt_make_external_tensor: unknown dtype " + std::to_string(dtype));
    *out = rt::MakeExternalTensor(data, std::span(shape, ndims), dtype);
    return PYPTO_OK;
  });
}

pypto_status pypto_rt_platform_soc(const char* platform, pypto_soc_desc* soc) {
  return c_api::Guard([&] {
    if (!platform || !soc) return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "pypto_rt_platform_soc: null argument");
    auto info = rt::BackendRegistry::Get().Platform(platform);
    if (!info) return c_api::Fail(PYPTO_ERR_NOT_FOUND, info.error());
    const ir::SocSpec& spec = info->soc;
    *soc = pypto_soc_desc{.table = nullptr,
                          .name = Interned(spec.name),
                          .arch = Interned(spec.arch),
                          .aic_cores = static_cast<uint32_t>(spec.aic_cores),
                          .aiv_cores = static_cast<uint32_t>(spec.aiv_cores),
                          .ub_bytes = static_cast<uint64_t>(spec.ub_bytes),
                          .l1_bytes = static_cast<uint64_t>(spec.l1_bytes),
                          .l0a_bytes = static_cast<uint64_t>(spec.l0a_bytes),
                          .l0b_bytes = static_cast<uint64_t>(spec.l0b_bytes),
                          .l0c_bytes = static_cast<uint64_t>(spec.l0c_bytes),
                          .bias_bytes = static_cast<uint64_t>(spec.bias_bytes),
                          .alignment = static_cast<uint64_t>(spec.alignment)};
    // A table the ir library knows is named, so that its fields the description has no room for
    // (the UB reserved above ub_bytes) come with it.
    if (ir::SocNamed(spec.name)) soc->table = Interned(spec.name);
    return PYPTO_OK;
  });
}

}  // extern "C"
