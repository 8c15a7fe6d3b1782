// Bitwise, shift and remainder kernels on integer tiles, at the tiles' own width and signedness (no
// widening: a shift or a remainder of an unsigned element differs from the signed one's).
//
// Shifts follow torch.bitwise_left_shift / bitwise_right_shift: a count outside [0, bits) shifts
// every bit out, giving 0 (and -1 for a negative element shifted right); a signed element shifts
// right arithmetically. Rem rounds the quotient down, so the remainder has the divisor's sign
// (torch.remainder); x rem -1 is 0.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pypto::sim {

enum class IntegerOp : uint8_t { And, Or, Xor, Shl, Shr, Rem };

struct IntegerType {
  uint8_t bytes = 4;  // 1, 2, 4 or 8
  bool is_signed = true;
};

// dst[i] = a[i] op b[i], or a[i] op s (s narrowed to the element type, keeping its low bits) when b is
// null. dst may be the same array as a or b. Returns false, at the first zero divisor, for a
// remainder by zero (dst is then only partly written).
bool IntegerBinary(IntegerOp op, IntegerType type, void* dst, const void* a, const void* b, int64_t s, size_t n);

}  // namespace pypto::sim
