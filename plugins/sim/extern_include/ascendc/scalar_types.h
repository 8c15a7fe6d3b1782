// The element types AscendC kernels name that C++ lacks: `half` (IEEE binary16, the host's _Float16)
// and `bfloat16_t` (the top half of a float, rounded to nearest even). Vector operations compute on
// them in float (ComputeType) and round once per result, as the vector unit does.
#ifndef PYPTO_SIM_ASCENDC_SCALAR_TYPES_H_
#define PYPTO_SIM_ASCENDC_SCALAR_TYPES_H_

#include <cstdint>
#include <cstring>
#include <type_traits>

using half = _Float16;

#ifndef PYPTO_SIM_BFLOAT16_DEFINED
#define PYPTO_SIM_BFLOAT16_DEFINED
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
    word += 0x7fffu + ((word >> 16) & 1u);
    bits = static_cast<uint16_t>(word >> 16);
  }
  operator float() const {  // NOLINT
    const uint32_t word = static_cast<uint32_t>(bits) << 16;
    float value;
    std::memcpy(&value, &word, sizeof(value));
    return value;
  }
};
#endif

namespace AscendC::detail {

template <typename T>
inline constexpr bool kIsFloat = std::is_same_v<T, float> || std::is_same_v<T, half> ||
                                 std::is_same_v<T, bfloat16_t> || std::is_same_v<T, double>;

// What an element is computed in: float for the floating types, the type itself for integers.
template <typename T>
using ComputeType = std::conditional_t<kIsFloat<T>, float, T>;

template <typename T>
inline ComputeType<T> Widen(T value) {
  return static_cast<ComputeType<T>>(value);
}
template <typename T, typename V>
inline T Narrow(V value) {
  return static_cast<T>(value);
}

// A parameter that takes part in no deduction: `Adds(dst, src, 2.0f, n)` with a half dst converts.
template <typename T>
struct Identity {
  using type = T;
};
template <typename T>
using NoDeduce = typename Identity<T>::type;

}  // namespace AscendC::detail

#endif  // PYPTO_SIM_ASCENDC_SCALAR_TYPES_H_
