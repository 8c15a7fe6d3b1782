// Scalar arithmetic of the simulator: loop variables, offsets and other integer scalars live in a
// per-execution register file of int64 slots. The decoder folds constant operands with the same
// functions the executor runs, so both agree on every corner case.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace pypto::sim {

// The integer forms of ir::BinaryOp (true division yields a float and has no integer form).
// Comparisons yield 0 or 1. SignExtend/ZeroExtend keep the low `b` bits of `a`, sign- or
// zero-extended: a narrowing scalar cast (INT64 to INT32 wraps as on a device).
// FEq..FGe compare the FP32 values whose bit patterns `a` and `b` hold (a pl.read FP32 element, an FP32
// parameter or constant), yielding 0 or 1. FpToSi converts the FP32 in `a` to a signed integer of `b`
// bits, SiToFp the integer `a` to the bits of an FP32 (scalar casts between the two).
//
// A kernel array indexed at run time lies in consecutive registers: CheckIndex (`dst = a`, failing
// unless 0 <= a < b, the array's extent) guards LoadIndexed (`dst = r[a + b]`, `a` the first register's
// number) and StoreIndexed (`r[dst + a] = b`). Only these two touch the register file by number; the
// executor runs them itself, EvalScalar the rest.
enum class ScalarOp : uint8_t { Add, Sub, Mul, FloorDiv, FloorMod, Min, Max, Shl, Shr, Eq, Ne, Lt, Le, Gt, Ge, SignExtend,
                                ZeroExtend, FEq, FNe, FLt, FLe, FGt, FGe, FpToSi, SiToFp, CheckIndex, LoadIndexed,
                                StoreIndexed };

// The DSL spelling: "+", "//", "%", "min", ...
const char* ScalarOpSymbol(ScalarOp op);

// Python's floor division and modulo: the quotient rounds toward -inf and the remainder takes the
// divisor's sign. `b` must not be 0. INT64_MIN // -1 wraps to INT64_MIN (as does the product).
inline int64_t FloorDiv(int64_t a, int64_t b) {
  if (b == -1) return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
inline int64_t FloorMod(int64_t a, int64_t b) {
  if (b == -1) return 0;
  const int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

// `out = a op b`. Integer arithmetic wraps around (two's complement) instead of overflowing.
// Returns false only for a division or modulo by zero (`out` is then left unchanged).
inline float Fp32Of(int64_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits)); }

// An FP32 as a signed integer of `bits` bits: rounded toward zero (as C and MLIR's fptosi do),
// saturated at the integer's range, NaN as 0.
inline int64_t FpToSi(float value, int64_t bits) {
  if (std::isnan(value)) return 0;
  const int64_t width = std::clamp<int64_t>(bits, 1, 64);
  const double max = width == 64 ? 9223372036854775807.0 : static_cast<double>((int64_t{1} << (width - 1)) - 1);
  const double truncated = std::trunc(static_cast<double>(value));
  if (truncated >= max) return width == 64 ? INT64_MAX : (int64_t{1} << (width - 1)) - 1;
  if (truncated <= -max - 1) return width == 64 ? INT64_MIN : -(int64_t{1} << (width - 1));
  return static_cast<int64_t>(truncated);
}

inline bool EvalScalar(ScalarOp op, int64_t a, int64_t b, int64_t& out) {
  const auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (op) {
    case ScalarOp::Add: out = static_cast<int64_t>(ua + ub); return true;
    case ScalarOp::Sub: out = static_cast<int64_t>(ua - ub); return true;
    case ScalarOp::Mul: out = static_cast<int64_t>(ua * ub); return true;
    case ScalarOp::FloorDiv:
      if (b == 0) return false;
      out = FloorDiv(a, b);
      return true;
    case ScalarOp::FloorMod:
      if (b == 0) return false;
      out = FloorMod(a, b);
      return true;
    case ScalarOp::Min: out = std::min(a, b); return true;
    case ScalarOp::Max: out = std::max(a, b); return true;
    case ScalarOp::Shl:
      if (b < 0 || b >= 64) return false;
      out = static_cast<int64_t>(ua << b);
      return true;
    case ScalarOp::Shr:
      if (b < 0 || b >= 64) return false;
      out = a >> b;
      return true;
    case ScalarOp::Eq: out = a == b; return true;
    case ScalarOp::Ne: out = a != b; return true;
    case ScalarOp::Lt: out = a < b; return true;
    case ScalarOp::Le: out = a <= b; return true;
    case ScalarOp::Gt: out = a > b; return true;
    case ScalarOp::Ge: out = a >= b; return true;
    case ScalarOp::SignExtend:
      out = b >= 64 ? a : static_cast<int64_t>(ua << (64 - b)) >> (64 - b);
      return true;
    case ScalarOp::ZeroExtend:
      out = b >= 64 ? a : static_cast<int64_t>(ua & ((uint64_t{1} << b) - 1));
      return true;
    case ScalarOp::FEq: out = Fp32Of(a) == Fp32Of(b); return true;
    case ScalarOp::FNe: out = Fp32Of(a) != Fp32Of(b); return true;
    case ScalarOp::FLt: out = Fp32Of(a) < Fp32Of(b); return true;
    case ScalarOp::FLe: out = Fp32Of(a) <= Fp32Of(b); return true;
    case ScalarOp::FGt: out = Fp32Of(a) > Fp32Of(b); return true;
    case ScalarOp::FGe: out = Fp32Of(a) >= Fp32Of(b); return true;
    case ScalarOp::FpToSi: out = FpToSi(Fp32Of(a), b); return true;
    case ScalarOp::SiToFp: out = std::bit_cast<uint32_t>(static_cast<float>(a)); return true;
    case ScalarOp::CheckIndex:
      if (a < 0 || a >= b) return false;
      out = a;
      return true;
    case ScalarOp::LoadIndexed:
    case ScalarOp::StoreIndexed: return false;  // the executor's own
  }
  return false;
}

// The number of iterations of Python's range(start, stop, step); `step` must not be 0. The count
// can exceed INT64_MAX (range(INT64_MIN, INT64_MAX)), hence unsigned.
inline uint64_t TripCount(int64_t start, int64_t stop, int64_t step) {
  using Wide = __int128;
  if (step > 0) return start < stop ? static_cast<uint64_t>((Wide{stop} - start + step - 1) / step) : 0;
  return start > stop ? static_cast<uint64_t>((Wide{start} - stop - Wide{step} - 1) / -Wide{step}) : 0;
}

}  // namespace pypto::sim
