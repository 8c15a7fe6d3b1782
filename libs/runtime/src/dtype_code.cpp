#include "pypto/runtime/dtype_code.h"

#include "pypto-c/runtime.h"

namespace pypto::rt {

std::optional<uint8_t> RuntimeDtypeCode(ir::DataType dtype) {
  using ir::DataType;
  switch (dtype) {
    case DataType::FP32: return PYPTO_RT_FLOAT32;
    case DataType::FP16: return PYPTO_RT_FLOAT16;
    case DataType::BF16: return PYPTO_RT_BFLOAT16;
    case DataType::INT8: return PYPTO_RT_INT8;
    case DataType::INT16: return PYPTO_RT_INT16;
    case DataType::INT32: return PYPTO_RT_INT32;
    case DataType::INT64:
    case DataType::INDEX: return PYPTO_RT_INT64;
    case DataType::UINT8: return PYPTO_RT_UINT8;
    case DataType::UINT16: return PYPTO_RT_UINT16;
    case DataType::UINT32: return PYPTO_RT_UINT32;
    case DataType::UINT64: return PYPTO_RT_UINT64;
    case DataType::BOOL: return PYPTO_RT_BOOL;
    case DataType::FP8E4M3FN: return PYPTO_RT_FP8E4M3FN;
    case DataType::FP8E8M0: return PYPTO_RT_FP8E8M0;
    case DataType::FP4: return PYPTO_RT_FP4E2M1;
    default: return std::nullopt;
  }
}

}  // namespace pypto::rt
