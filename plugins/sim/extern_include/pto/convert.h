// One element converted between the tile element types with a pto RoundMode: what TCVT does per element,
// and TMOV/TSTORE where an accumulator narrows. Float to half/bfloat16 honours every mode (the two
// neighbours of the value are found on the 16-bit grid and the mode picks one); float to integer rounds
// by the mode and saturates (NaN becomes 0); widening conversions are exact.
#ifndef PYPTO_SIM_PTO_CONVERT_H_
#define PYPTO_SIM_PTO_CONVERT_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "pypto_sim_dtypes.h"
#include "pto/types.h"

namespace pto::sim {

template <typename T>
constexpr bool kIsHalfLike = std::is_same_v<T, half> || std::is_same_v<T, bfloat16_t>;

// The type an element is computed in: 16-bit floats compute in float, as the vector unit does.
template <typename T>
using ComputeT = std::conditional_t<kIsHalfLike<T>, float, T>;

template <typename T>
uint16_t BitsOf(T value) {
  uint16_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}
template <typename T>
T FromBits(uint16_t bits) {
  T value{};
  std::memcpy(static_cast<void*>(&value), &bits, sizeof(bits));
  return value;
}
// The next value of a sign-magnitude 16-bit float towards +inf / -inf.
inline uint16_t NextUp(uint16_t bits) {
  if ((bits & 0x7fffu) == 0) return 1;
  return (bits & 0x8000u) ? bits - 1 : bits + 1;
}
inline uint16_t NextDown(uint16_t bits) {
  if ((bits & 0x7fffu) == 0) return 0x8001u;
  return (bits & 0x8000u) ? bits + 1 : bits - 1;
}

template <typename T>
T NearestEven(float value) {
  if constexpr (std::is_same_v<T, half>)
    return static_cast<half>(value);
  else
    return bfloat16_t(value);
}

template <typename T>
T NarrowFloat(float value, RoundMode mode) {
  const T nearest = NearestEven<T>(value);
  const float back = static_cast<float>(nearest);
  if (std::isnan(value) || back == value || mode == RoundMode::CAST_RINT || mode == RoundMode::CAST_NONE)
    return nearest;
  const uint16_t lo = back < value ? BitsOf(nearest) : NextDown(BitsOf(nearest));
  const uint16_t hi = back < value ? NextUp(BitsOf(nearest)) : BitsOf(nearest);
  const double below = static_cast<double>(value) - static_cast<float>(FromBits<T>(lo));
  const double above = static_cast<double>(static_cast<float>(FromBits<T>(hi))) - value;
  uint16_t pick = BitsOf(nearest);
  switch (mode) {
    case RoundMode::CAST_FLOOR: pick = lo; break;
    case RoundMode::CAST_CEIL: pick = hi; break;
    case RoundMode::CAST_TRUNC: pick = value > 0 ? lo : hi; break;
    case RoundMode::CAST_ROUND: pick = below < above ? lo : above < below ? hi : (value > 0 ? hi : lo); break;
    case RoundMode::CAST_ODD: pick = (lo & 1u) ? lo : hi; break;
    default: break;
  }
  return FromBits<T>(pick);
}

inline double RoundToIntegral(double value, RoundMode mode) {
  switch (mode) {
    case RoundMode::CAST_ROUND: return std::round(value);
    case RoundMode::CAST_FLOOR: return std::floor(value);
    case RoundMode::CAST_CEIL: return std::ceil(value);
    case RoundMode::CAST_TRUNC: return std::trunc(value);
    default: return std::nearbyint(value);
  }
}

template <typename To, typename From>
To Convert(From value, RoundMode mode = RoundMode::CAST_RINT) {
  if constexpr (std::is_same_v<To, From>) {
    return value;
  } else if constexpr (kIsHalfLike<To>) {
    return NarrowFloat<To>(static_cast<float>(value), mode);
  } else if constexpr (std::is_integral_v<To>) {
    if constexpr (std::is_integral_v<From>) {
      return static_cast<To>(value);
    } else {
      const double wide = static_cast<float>(value);
      if (std::isnan(wide)) return 0;
      const double rounded = RoundToIntegral(wide, mode);
      if (rounded <= static_cast<double>(std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
      if (rounded >= static_cast<double>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
      return static_cast<To>(rounded);
    }
  } else {
    return static_cast<To>(static_cast<ComputeT<From>>(value));
  }
}

}  // namespace pto::sim

#endif  // PYPTO_SIM_PTO_CONVERT_H_
