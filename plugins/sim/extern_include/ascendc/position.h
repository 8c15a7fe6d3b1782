// Where a tensor lives (AscendC's TPosition). On A2/A3 the VEC positions are the vector core's UB; the
// cube's (A1/B1: L1, A2/B2: L0A/L0B, CO1: L0C) are not implemented by this library yet.
#ifndef PYPTO_SIM_ASCENDC_POSITION_H_
#define PYPTO_SIM_ASCENDC_POSITION_H_

#include <cstdint>

namespace AscendC {

enum class TPosition : uint8_t {
  GM,
  A1,
  A2,
  B1,
  B2,
  C1,
  C2,
  CO1,
  CO2,
  VECIN,
  VECOUT,
  VECCALC,
  LCM = VECCALC,
  SPM,
  SHM = SPM,
  TSCM,
  C2PIPE2GM,
  C2PIPE2LOCAL,
  MAX,
};
using QuePosition = TPosition;

namespace detail {

inline constexpr bool IsUbPosition(TPosition position) {
  return position == TPosition::VECIN || position == TPosition::VECOUT || position == TPosition::VECCALC;
}

inline const char* PositionName(TPosition position) {
  switch (position) {
    case TPosition::GM: return "GM";
    case TPosition::A1: return "A1";
    case TPosition::A2: return "A2";
    case TPosition::B1: return "B1";
    case TPosition::B2: return "B2";
    case TPosition::C1: return "C1";
    case TPosition::C2: return "C2";
    case TPosition::CO1: return "CO1";
    case TPosition::CO2: return "CO2";
    case TPosition::VECIN: return "VECIN";
    case TPosition::VECOUT: return "VECOUT";
    case TPosition::VECCALC: return "VECCALC";
    case TPosition::SPM: return "SPM";
    case TPosition::TSCM: return "TSCM";
    case TPosition::C2PIPE2GM: return "C2PIPE2GM";
    case TPosition::C2PIPE2LOCAL: return "C2PIPE2LOCAL";
    case TPosition::MAX: break;
  }
  return "?";
}

}  // namespace detail
}  // namespace AscendC

#endif  // PYPTO_SIM_ASCENDC_POSITION_H_
