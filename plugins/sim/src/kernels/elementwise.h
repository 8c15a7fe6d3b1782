// Element-wise tile kernels over dense arrays: unary math, two tiles combined lane by lane, and a tile
// combined with a scalar. Vectorized with Highway and dispatched per call to the best target the host
// supports. `dst` may be the same array as any source (in-place reuse); partially overlapping arrays
// are not allowed.
//
// Float results follow IEEE 754 (division by zero gives inf or NaN). Exp and Log (hwy/contrib/math)
// are at most 1.03 and 0.90 ULP from the exact result over every float (measured exhaustively on
// AVX2); Sqrt and Recip are correctly rounded and Rsqrt is 1/sqrt(x) in float, as torch computes it
// (not the approximate reciprocal instructions); Sin and Cos are evaluated in double and rounded once.
// Max and Min return NaN when either operand is NaN,
// and Relu/Abs/Neg pass NaN through, as torch does. Fmod is the remainder truncated toward zero
// (C's fmod, torch.fmod): exact for floats, a - trunc(a / b) * b for integers. Rem is the remainder
// of the quotient rounded down (torch.remainder), signed as the divisor: fmod moved by one divisor
// when the two signs differ, as torch computes it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pypto::sim {

enum class BinaryOp : uint8_t { Add, Sub, Mul, Div, Max, Min, Fmod, Rem };

enum class UnaryOp : uint8_t { Exp, Log, Sqrt, Rsqrt, Recip, Relu, Abs, Neg, Sin, Cos };

// dst[i] = a[i] op b[i].
void BinaryF32(BinaryOp op, float* dst, const float* a, const float* b, size_t n);

// Integer arithmetic wraps around (two's complement); division truncates toward zero and
// INT32_MIN / -1 wraps (INT32_MIN fmod -1 and rem -1 are 0). Returns false when a divisor is zero (dst is then
// only partly written).
bool BinaryI32(BinaryOp op, int32_t* dst, const int32_t* a, const int32_t* b, size_t n);

// dst[i] = a[i] op s.
void BinaryScalarF32(BinaryOp op, float* dst, const float* a, float s, size_t n);

// As BinaryI32; returns false, writing nothing, when dividing by a zero scalar.
bool BinaryScalarI32(BinaryOp op, int32_t* dst, const int32_t* a, int32_t s, size_t n);

// dst[i] = op(src[i]). Relu(-0) is +0.
void UnaryF32(UnaryOp op, float* dst, const float* src, size_t n);

// dst[i] = src[i] > 0 ? src[i] : slope * src[i] (leaky ReLU; NaN passes through).
void LeakyReluF32(float* dst, const float* src, float slope, size_t n);

// dst[i] = a[i] > 0 ? a[i] : a[i] * slope[i] (parametric ReLU, a slope per element; NaN passes through).
void PreluF32(float* dst, const float* a, const float* slope, size_t n);

// Every bit of `bytes` bytes inverted: bitwise NOT of integer elements of any width.
void BitwiseNot(void* dst, const void* src, size_t bytes);

// Relu, Abs and Neg only (returns false, writing nothing, for the others). Abs(INT32_MIN) and
// Neg(INT32_MIN) wrap to INT32_MIN.
bool UnaryI32(UnaryOp op, int32_t* dst, const int32_t* src, size_t n);

}  // namespace pypto::sim
