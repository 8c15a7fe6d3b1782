#include "pad_value.h"

#include <bit>
#include <cmath>
#include <limits>

#include "kernels/convert.h"

namespace pypto::sim {
namespace {

struct Extremes {
  uint64_t lowest = 0, highest = 0;
};

// Two's-complement extremes of a `bits`-wide integer, in the low bits of the pattern.
Extremes IntegerExtremes(int bits, bool is_signed) {
  const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  if (!is_signed) return {0, mask};
  const uint64_t sign = uint64_t{1} << (bits - 1);
  return {sign, mask ^ sign};
}

std::optional<Extremes> ExtremesOf(ir::DataType dtype) {
  using ir::DataType;
  switch (dtype) {
    case DataType::FP32: return Extremes{0xFF800000u, 0x7F800000u};  // -inf, +inf
    case DataType::FP16: return Extremes{0xFC00u, 0x7C00u};
    case DataType::BF16: return Extremes{0xFF80u, 0x7F80u};
    case DataType::INT8: return IntegerExtremes(8, true);
    case DataType::INT16: return IntegerExtremes(16, true);
    case DataType::INT32: return IntegerExtremes(32, true);
    case DataType::INT64: return IntegerExtremes(64, true);
    case DataType::UINT8: return IntegerExtremes(8, false);
    case DataType::UINT16: return IntegerExtremes(16, false);
    case DataType::UINT32: return IntegerExtremes(32, false);
    case DataType::UINT64: return IntegerExtremes(64, false);
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<uint64_t> PadBits(ir::DataType dtype, std::string_view mode) {
  auto extremes = ExtremesOf(dtype);
  if (!extremes) return std::nullopt;
  if (mode == "zero") return 0;
  if (mode == "min") return extremes->lowest;
  if (mode == "max") return extremes->highest;
  return std::nullopt;
}

std::optional<uint64_t> ValueBits(ir::DataType dtype, double value) {
  using ir::DataType;
  const float as_float = static_cast<float>(value);
  if (dtype == DataType::FP32) return std::bit_cast<uint32_t>(as_float);
  if (dtype == DataType::FP16 || dtype == DataType::BF16) {
    uint16_t bits = 0;
    Convert(ElemType::F32, dtype == DataType::FP16 ? ElemType::F16 : ElemType::BF16, &bits, &as_float, 1,
            RoundMode::Rint);
    return bits;
  }
  if (!ExtremesOf(dtype) || std::isnan(value)) return std::nullopt;
  return static_cast<uint64_t>(static_cast<int64_t>(std::trunc(value)));  // the low bytes are the element
}

}  // namespace pypto::sim
