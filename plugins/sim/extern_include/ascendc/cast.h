// Cast between element types with an explicit RoundMode: CAST_RINT rounds to nearest even,
// CAST_ROUND to nearest with halves away from zero, CAST_FLOOR / CAST_CEIL / CAST_TRUNC toward -inf /
// +inf / zero, CAST_ODD (to a narrower float) to odd, and CAST_NONE where no precision is lost or to
// nearest even otherwise. Float to integer saturates at the integer's range.
#ifndef PYPTO_SIM_ASCENDC_CAST_H_
#define PYPTO_SIM_ASCENDC_CAST_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "ascendc/local_tensor.h"
#include "ascendc/vector_mask.h"

namespace AscendC {

enum class RoundMode : uint8_t { CAST_NONE = 0, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD };

namespace detail {

// The neighbour of a narrow float `value` one unit in the last place away from zero or toward it.
template <typename N>
inline N StepBits(N value, int away) {
  uint16_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  bits = static_cast<uint16_t>(bits + away);
  std::memcpy(&value, &bits, sizeof(bits));
  return value;
}

// float -> half / bfloat16 under `mode`: start from nearest-even and move one ulp where the mode
// asks for the other neighbour.
template <typename N>
inline N NarrowFloat(float value, RoundMode mode) {
  N nearest = static_cast<N>(value);
  const float back = static_cast<float>(nearest);
  if (back == value || std::isnan(value) || std::isinf(back)) return nearest;
  const bool magnitude_up = std::fabs(back) > std::fabs(value);  // nearest moved away from zero
  switch (mode) {
    case RoundMode::CAST_NONE:
    case RoundMode::CAST_RINT: return nearest;
    case RoundMode::CAST_TRUNC: return magnitude_up ? StepBits(nearest, -1) : nearest;
    case RoundMode::CAST_FLOOR:
      return back > value ? (value >= 0 ? StepBits(nearest, -1) : StepBits(nearest, 1)) : nearest;
    case RoundMode::CAST_CEIL:
      return back < value ? (value >= 0 ? StepBits(nearest, 1) : StepBits(nearest, -1)) : nearest;
    case RoundMode::CAST_ROUND: {
      const N other = magnitude_up ? StepBits(nearest, -1) : StepBits(nearest, 1);
      const float d_nearest = std::fabs(back - value), d_other = std::fabs(static_cast<float>(other) - value);
      if (d_nearest == d_other) return magnitude_up ? nearest : other;  // a tie goes away from zero
      return nearest;
    }
    case RoundMode::CAST_ODD: {
      const N truncated = magnitude_up ? StepBits(nearest, -1) : nearest;
      uint16_t bits;
      std::memcpy(&bits, &truncated, sizeof(bits));
      return (bits & 1) ? truncated : StepBits(truncated, 1);
    }
  }
  return nearest;
}

inline double RoundToIntegral(double value, RoundMode mode) {
  switch (mode) {
    case RoundMode::CAST_FLOOR: return std::floor(value);
    case RoundMode::CAST_CEIL: return std::ceil(value);
    case RoundMode::CAST_ROUND: return std::round(value);
    case RoundMode::CAST_TRUNC: return std::trunc(value);
    default: return std::nearbyint(value);  // the default environment rounds to nearest even
  }
}

template <typename D, typename S>
inline D CastOne(S source, RoundMode mode) {
  if constexpr (kIsFloat<S> && !kIsFloat<D>) {
    const double value = RoundToIntegral(static_cast<double>(static_cast<float>(source)), mode);
    if (std::isnan(value)) return D{0};
    if (value <= static_cast<double>(std::numeric_limits<D>::lowest())) return std::numeric_limits<D>::lowest();
    if (value >= static_cast<double>(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
    return static_cast<D>(value);
  } else if constexpr (std::is_same_v<D, half> || std::is_same_v<D, bfloat16_t>) {
    if constexpr (std::is_same_v<S, D>) return source;
    if constexpr (kIsFloat<S>) return NarrowFloat<D>(static_cast<float>(source), mode);
    return NarrowFloat<D>(static_cast<float>(source), mode);
  } else if constexpr (std::is_same_v<D, float> && std::is_integral_v<S>) {
    return static_cast<float>(source);
  } else if constexpr (kIsFloat<D>) {
    return static_cast<D>(static_cast<float>(source));
  } else {
    return static_cast<D>(source);
  }
}

}  // namespace detail

template <typename D, typename S>
inline void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& mode, const uint32_t count) {
  D* d = dst.GetPhyAddr();
  const S* s = src.GetPhyAddr();
  for (uint32_t i = 0; i < count; ++i) d[i] = detail::CastOne<D>(s[i], mode);
}
template <typename D, typename S, bool isSetMask = true>
inline void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& mode, const uint64_t mask,
                 const uint8_t repeatTimes, const UnaryRepeatParams& params) {
  D* d = dst.GetPhyAddr();
  const S* s = src.GetPhyAddr();
  detail::ForEachUnaryLane<D, S>(detail::TakeMask<isSetMask>(mask), repeatTimes, params,
                                 [&](uint64_t od, uint64_t os) { d[od] = detail::CastOne<D>(s[os], mode); });
}
template <typename D, typename S, bool isSetMask = true>
inline void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& mode, const uint64_t mask[],
                 const uint8_t repeatTimes, const UnaryRepeatParams& params) {
  D* d = dst.GetPhyAddr();
  const S* s = src.GetPhyAddr();
  detail::ForEachUnaryLane<D, S>(detail::TakeMask<isSetMask>(mask), repeatTimes, params,
                                 [&](uint64_t od, uint64_t os) { d[od] = detail::CastOne<D>(s[os], mode); });
}

}  // namespace AscendC

#endif  // PYPTO_SIM_ASCENDC_CAST_H_
