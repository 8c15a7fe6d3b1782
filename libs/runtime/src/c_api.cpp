// libpypto_runtime's C ABI. Every function that can fail runs under c_api::Guard, so no C++
// exception crosses into C; arguments are checked here so callers get a status, not a throw.
#include <span>
#include <string>

#include "pypto-c/runtime.h"
#include "pypto/ir/c_api_bridge.h"
#include "pypto/runtime/chip_tensor.h"

using namespace pypto;

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

}  // extern "C"
