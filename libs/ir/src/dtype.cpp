#include "pypto/ir/dtype.h"

#include <array>
#include <limits>
#include <utility>

namespace pypto::ir {
namespace {

struct DataTypeInfo {
  DataType dtype;
  std::string_view name;
  int bits;
};

constexpr std::array kDataTypes = {
    DataTypeInfo{DataType::BOOL, "BOOL", 8},       DataTypeInfo{DataType::INT4, "INT4", 4},
    DataTypeInfo{DataType::INT8, "INT8", 8},       DataTypeInfo{DataType::INT16, "INT16", 16},
    DataTypeInfo{DataType::INT32, "INT32", 32},    DataTypeInfo{DataType::INT64, "INT64", 64},
    DataTypeInfo{DataType::INDEX, "INDEX", 64},    DataTypeInfo{DataType::UINT4, "UINT4", 4},
    DataTypeInfo{DataType::UINT8, "UINT8", 8},     DataTypeInfo{DataType::UINT16, "UINT16", 16},
    DataTypeInfo{DataType::UINT32, "UINT32", 32},  DataTypeInfo{DataType::UINT64, "UINT64", 64},
    DataTypeInfo{DataType::FP4, "FP4", 4},         DataTypeInfo{DataType::FP8E4M3FN, "FP8E4M3FN", 8},
    DataTypeInfo{DataType::FP8E5M2, "FP8E5M2", 8}, DataTypeInfo{DataType::FP16, "FP16", 16},
    DataTypeInfo{DataType::FP32, "FP32", 32},      DataTypeInfo{DataType::FP64, "FP64", 64},
    DataTypeInfo{DataType::FP8E8M0, "FP8E8M0", 8}, DataTypeInfo{DataType::BF16, "BF16", 16},
    DataTypeInfo{DataType::HF4, "HF4", 4},         DataTypeInfo{DataType::HF8, "HF8", 8},
    DataTypeInfo{DataType::TASK_ID, "TASK_ID", 64},
};

const DataTypeInfo* Info(DataType dtype) {
  for (const auto& info : kDataTypes)
    if (info.dtype == dtype) return &info;
  return nullptr;
}

}  // namespace

std::string_view DataTypeName(DataType dtype) {
  const auto* info = Info(dtype);
  return info ? info->name : "UNKNOWN";
}

std::optional<DataType> DataTypeFromName(std::string_view name) {
  for (const auto& info : kDataTypes)
    if (info.name == name) return info.dtype;
  // Upstream spells a few aliases too.
  if (name == "FLOAT32") return DataType::FP32;
  if (name == "FLOAT16") return DataType::FP16;
  return std::nullopt;
}

int DataTypeBits(DataType dtype) {
  const auto* info = Info(dtype);
  return info ? info->bits : 0;
}

bool IsFloat(DataType dtype) {
  auto code = static_cast<uint8_t>(dtype);
  return (code >= 0x30 && code <= 0x36) || (code >= 0x40 && code <= 0x42);
}

bool IsInteger(DataType dtype) {
  auto code = static_cast<uint8_t>(dtype);
  return (code >= 0x10 && code <= 0x15) || (code >= 0x20 && code <= 0x24);
}

bool IsUnsignedInteger(DataType dtype) {
  auto code = static_cast<uint8_t>(dtype);
  return code >= 0x20 && code <= 0x24;
}

std::pair<int64_t, int64_t> IntegerRange(DataType dtype) {
  const int bits = DataTypeBits(dtype);
  const bool is_unsigned = IsUnsignedInteger(dtype);
  if (bits >= 64)
    return {is_unsigned ? 0 : std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  if (is_unsigned) return {0, (int64_t{1} << bits) - 1};
  return {-(int64_t{1} << (bits - 1)), (int64_t{1} << (bits - 1)) - 1};
}

}  // namespace pypto::ir
