// The vocabulary of pto-isa's tile interface (include/pto/common/type.hpp upstream): where a tile
// lives, how its elements are laid out, how a conversion rounds. Only the names and values a kernel
// spells; the simulator's meaning of each is in the header that uses it.
#ifndef PYPTO_SIM_PTO_TYPES_H_
#define PYPTO_SIM_PTO_TYPES_H_

#include <cstdint>

namespace pto {

// A tile or global-tensor extent known only when the kernel runs.
constexpr int DYNAMIC = -1;

enum class TileType { Vec, Mat, Left, Right, Acc, Bias, Scaling, ScaleLeft, ScaleRight, Ctrl };
enum class BLayout { RowMajor = 0, ColMajor = 1 };
enum class SLayout { NoneBox = 0, RowMajor = 1, ColMajor = 2 };
enum class Layout { ND, DN, NZ, SCALE };
enum class PadValue : uint64_t { Null = 0, Zero = 1, Max = 2, Min = 3, CustomBase = 0x100000000ULL };
enum class CompactMode { Null, Normal, RowPlusOne, RowAlignedPadding };
enum class RoundMode : uint8_t {
  CAST_NONE = 0,
  CAST_RINT = 1,   // nearest, ties to even
  CAST_ROUND = 2,  // nearest, ties away from zero
  CAST_FLOOR = 3,
  CAST_CEIL = 4,
  CAST_TRUNC = 5,
  CAST_ODD = 6,  // to the neighbour whose last mantissa bit is 1
};
enum class SaturationMode : uint8_t { ON = 0, OFF = 1 };
enum class CmpMode : uint8_t { EQ = 0, NE = 1, LT = 2, LE = 3, GT = 4, GE = 5 };
enum class AccPhase : uint8_t { Unspecified = 0x0, Partial = 0x2, Final = 0x3 };
enum class ReluPreMode : uint8_t { NoRelu = 0, NormalRelu = 1 };

namespace TileConfig {
constexpr int alignedSize = 32;
constexpr int fixedRowSize = 16;
constexpr int fractalABSize = 512;
constexpr int fractalCSize = 1024;
}  // namespace TileConfig

// A pad value other than the three named ones: the element's bits in the low 32 bits.
constexpr PadValue PadValueCustom(float value) {
  return static_cast<PadValue>(static_cast<uint64_t>(PadValue::CustomBase) |
                               static_cast<uint64_t>(__builtin_bit_cast(uint32_t, value)));
}

}  // namespace pto

#endif  // PYPTO_SIM_PTO_TYPES_H_
