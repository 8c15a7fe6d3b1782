#include "c_types.h"

#include <fmt/format.h>

namespace pypto::backend_ptoas {

pypto::expected<std::string, std::string> CElementType(ir::DataType dtype) {
  using ir::DataType;
  switch (dtype) {
    case DataType::BOOL: return std::string("bool");
    case DataType::INT8: return std::string("int8_t");
    case DataType::INT16: return std::string("int16_t");
    case DataType::INT32: return std::string("int32_t");
    case DataType::INT64:
    case DataType::INDEX: return std::string("int64_t");
    case DataType::UINT8: return std::string("uint8_t");
    case DataType::UINT16: return std::string("uint16_t");
    case DataType::UINT32: return std::string("uint32_t");
    case DataType::UINT64: return std::string("uint64_t");
    // pto-isa's names for the narrow floating-point types.
    case DataType::FP16: return std::string("half");
    case DataType::FP32: return std::string("float");
    case DataType::BF16: return std::string("bfloat16_t");
    case DataType::FP8E4M3FN: return std::string("float8_e4m3_t");
    case DataType::FP8E5M2: return std::string("float8_e5m2_t");
    case DataType::FP8E8M0: return std::string("float8_e8m0_t");
    case DataType::FP4: return std::string("float4_e2m1x2_t");
    default: break;
  }
  return pypto::unexpected(
      fmt::format("element type {} has no C++ kernel type in backend-ptoas", ir::DataTypeName(dtype)));
}

}  // namespace pypto::backend_ptoas
