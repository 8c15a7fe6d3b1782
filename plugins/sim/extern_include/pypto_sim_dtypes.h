// The device's 16-bit floating-point types for kernels built with the host compiler: `half` is the
// compiler's _Float16 (IEEE binary16, arithmetic done in float), `bfloat16_t` a 16-bit storage type
// that converts from float rounding to nearest even, converts back exactly, and computes as float.
// Both the pto tile interface and AscendC (ascendc/scalar_types.h) take them from here.
#ifndef PYPTO_SIM_EXTERN_DTYPES_H_
#define PYPTO_SIM_EXTERN_DTYPES_H_

#include <cstdint>
#include <cstring>
#include <type_traits>

using half = _Float16;

struct bfloat16_t {
  uint16_t bits = 0;
  bfloat16_t() = default;
  bfloat16_t(float value) {  // NOLINT: converts implicitly, like the device type
    uint32_t word;
    std::memcpy(&word, &value, sizeof(word));
    if ((word & 0x7fffffffu) > 0x7f800000u) {
      bits = static_cast<uint16_t>((word >> 16) | 0x40u);  // a NaN stays a (quiet) NaN
      return;
    }
    word += 0x7fffu + ((word >> 16) & 1u);  // to nearest, ties to even
    bits = static_cast<uint16_t>(word >> 16);
  }
  operator float() const {  // NOLINT
    const uint32_t word = static_cast<uint32_t>(bits) << 16;
    float value;
    std::memcpy(&value, &word, sizeof(value));
    return value;
  }
};

static_assert(sizeof(bfloat16_t) == 2 && std::is_trivially_copyable_v<bfloat16_t>, "bfloat16_t is two bytes");

#endif  // PYPTO_SIM_EXTERN_DTYPES_H_
