// Element type conversion (tile.cast) between dense arrays, with upstream's rounding modes.
//
//   float -> integer:  None and Trunc round toward zero (as pto-isa's CPU model and torch's .to()),
//                      Rint and Odd to nearest even, Round to nearest with ties away from zero, Floor
//                      and Ceil as named. Out-of-range values saturate to the integer's limits and NaN
//                      becomes 0.
//   -> F32/F16/BF16:   None, Rint and Round round to nearest even; Floor, Ceil and Trunc as named
//                      (overflow then gives the largest finite value where the direction says so);
//                      Odd rounds to odd for F32 -> F16/BF16 and to nearest even elsewhere. NaN stays
//                      NaN (made quiet, sign and leading payload bits kept).
//   integer -> integer: wraps (keeps the low bits), as C++ and torch do.
//
// Widening float conversions are exact. `dst` may be the same array as `src`, even when the element
// sizes differ (the result then goes through scratch memory).
#pragma once

#include <cstddef>
#include <cstdint>

namespace pypto::sim {

enum class ElemType : uint8_t { F32, F16, BF16, I32, I16, I8, U8 };

enum class RoundMode : uint8_t { None, Rint, Round, Floor, Ceil, Trunc, Odd };

size_t ElemSize(ElemType type);

// Converts n elements of `from` at src to `to` at dst. Returns false only for an unknown type or mode.
bool Convert(ElemType from, ElemType to, void* dst, const void* src, size_t n, RoundMode mode);

}  // namespace pypto::sim
