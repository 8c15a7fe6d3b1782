// Scalar helpers kernels call on the scalar unit: AscendC::Std::min/max (constexpr, of one type) and
// ToFloat (bfloat16_t or half to float).
#ifndef PYPTO_SIM_ASCENDC_SCALAR_UTILS_H_
#define PYPTO_SIM_ASCENDC_SCALAR_UTILS_H_

#include "ascendc/scalar_types.h"

namespace AscendC {

namespace Std {
template <typename T>
constexpr const T& min(const T& a, const T& b) {
  return b < a ? b : a;
}
template <typename T>
constexpr const T& max(const T& a, const T& b) {
  return a < b ? b : a;
}
}  // namespace Std

inline float ToFloat(const bfloat16_t& value) { return static_cast<float>(value); }
inline float ToFloat(const half& value) { return static_cast<float>(value); }

}  // namespace AscendC

#endif  // PYPTO_SIM_ASCENDC_SCALAR_UTILS_H_
