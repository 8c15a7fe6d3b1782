// Element data types, with the byte codes upstream PyPTO uses.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

namespace pypto::ir {

enum class DataType : uint8_t {
  BOOL = 0x00,
  INT4 = 0x10,
  INT8 = 0x11,
  INT16 = 0x12,
  INT32 = 0x13,
  INT64 = 0x14,
  INDEX = 0x15,  // loop variables, dims and offsets; distinct from INT64
  UINT4 = 0x20,
  UINT8 = 0x21,
  UINT16 = 0x22,
  UINT32 = 0x23,
  UINT64 = 0x24,
  FP4 = 0x30,
  FP8E4M3FN = 0x31,
  FP8E5M2 = 0x32,
  FP16 = 0x33,
  FP32 = 0x34,
  FP64 = 0x35,
  FP8E8M0 = 0x36,
  BF16 = 0x40,
  HF4 = 0x41,
  HF8 = 0x42,
  TASK_ID = 0x50,
};

// The DSL spelling without the `pl.` prefix, e.g. "FP32".
std::string_view DataTypeName(DataType dtype);
std::optional<DataType> DataTypeFromName(std::string_view name);
// Storage size in bits (4 for the packed 4-bit types).
int DataTypeBits(DataType dtype);
inline int64_t DataTypeBytes(DataType dtype) { return (DataTypeBits(dtype) + 7) / 8; }
bool IsFloat(DataType dtype);
bool IsInteger(DataType dtype);
bool IsUnsignedInteger(DataType dtype);  // UINT4 .. UINT64
// The values an integer dtype holds, as int64 (UINT64 up to INT64_MAX).
std::pair<int64_t, int64_t> IntegerRange(DataType dtype);

}  // namespace pypto::ir
