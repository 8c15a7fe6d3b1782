// The element types AscendC kernels name that C++ lacks, `half` and `bfloat16_t` (pypto_sim_dtypes.h),
// and what AscendC's templates ask of element types. Vector operations compute on the 16-bit floats
// in float (ComputeType) and round once per result, as the vector unit does.
#ifndef PYPTO_SIM_ASCENDC_SCALAR_TYPES_H_
#define PYPTO_SIM_ASCENDC_SCALAR_TYPES_H_

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "pypto_sim_dtypes.h"  // half and bfloat16_t, shared with the pto tile interface

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
