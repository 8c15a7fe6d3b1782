#include "tensor_element.h"

#include <bit>
#include <cstring>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace pypto::codegen_orch {
namespace {

template <typename T>
T Load(const std::byte* address) {
  T value;
  std::memcpy(&value, address, sizeof(T));
  return value;
}

// FP16 and BF16 widened to float (exact).
float HalfToFloat(uint16_t bits) {
  const uint32_t sign = (bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    if (mantissa == 0) return std::bit_cast<float>(sign);
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;  // subnormal: mantissa * 2^-24
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

ElementValue Decode(const std::byte* address, uint8_t dtype) {
  switch (dtype) {
    case PYPTO_RT_FLOAT32: return {.is_float = true, .f = Load<float>(address)};
    case PYPTO_RT_FLOAT16: return {.is_float = true, .f = HalfToFloat(Load<uint16_t>(address))};
    case PYPTO_RT_BFLOAT16:
      return {.is_float = true, .f = std::bit_cast<float>(uint32_t{Load<uint16_t>(address)} << 16)};
    case PYPTO_RT_INT8: return {.i = Load<int8_t>(address)};
    case PYPTO_RT_INT16: return {.i = Load<int16_t>(address)};
    case PYPTO_RT_INT32: return {.i = Load<int32_t>(address)};
    case PYPTO_RT_INT64: return {.i = Load<int64_t>(address)};
    case PYPTO_RT_UINT8:
    case PYPTO_RT_BOOL: return {.i = Load<uint8_t>(address)};
    case PYPTO_RT_UINT16: return {.i = Load<uint16_t>(address)};
    case PYPTO_RT_UINT32: return {.i = Load<uint32_t>(address)};
    case PYPTO_RT_UINT64: return {.i = static_cast<int64_t>(Load<uint64_t>(address))};
    default: return {};
  }
}

}  // namespace

ir::Result<ElementValue> ReadElement(const rt::ChipTensor& tensor, std::span<const int64_t> indices,
                                     const std::string& name, const ir::Span& span) {
  std::vector<uint32_t> shape(tensor.shapes, tensor.shapes + tensor.ndims);
  if (indices.size() != tensor.ndims)
    return ir::MakeError(ir::DiagnosticKind::Type,
                     fmt::format("reads '{}' with {} indices, but it has {} dimensions", name, indices.size(),
                                 tensor.ndims),
                     span);
  uint64_t offset = tensor.start_offset;
  for (size_t d = 0; d < indices.size(); ++d) {
    if (indices[d] < 0 || static_cast<uint64_t>(indices[d]) >= tensor.shapes[d])
      return ir::MakeError(ir::DiagnosticKind::InvalidOperation,
                       fmt::format("reads '{}' at [{}], outside its shape [{}]", name, fmt::join(indices, ", "),
                                   fmt::join(shape, ", ")),
                       span);
    offset += static_cast<uint64_t>(indices[d]) * tensor.strides[d];
  }
  const auto* base = reinterpret_cast<const std::byte*>(tensor.buffer_addr);
  return Decode(base + offset * rt::ElementSize(tensor.dtype), tensor.dtype);
}

}  // namespace pypto::codegen_orch
