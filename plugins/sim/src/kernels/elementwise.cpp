// Element-wise kernels, compiled once per Highway target (foreach_target re-includes this file).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/elementwise.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "kernels/elementwise.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace pypto::sim {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <typename T>
void BinaryKernel(BinaryOp op, T* dst, const T* a, const T* b, size_t n) {
  const hn::ScalableTag<T> d;
  WithBinaryOp<T>(op, [&](auto f) { Map2(d, dst, a, b, n, f); });
}

template <typename T>
void BinaryScalarKernel(BinaryOp op, T* dst, const T* a, T s, size_t n) {
  const hn::ScalableTag<T> d;
  const auto vs = hn::Set(d, s);
  WithBinaryOp<T>(op, [&](auto f) { Map1(d, dst, a, n, [&](auto v) { return f(v, vs); }); });
}

void BinaryF32Kernel(BinaryOp op, float* dst, const float* a, const float* b, size_t n) {
  BinaryKernel(op, dst, a, b, n);
}
void BinaryI32Kernel(BinaryOp op, int32_t* dst, const int32_t* a, const int32_t* b, size_t n) {
  BinaryKernel(op, dst, a, b, n);
}
void BinaryScalarF32Kernel(BinaryOp op, float* dst, const float* a, float s, size_t n) {
  BinaryScalarKernel(op, dst, a, s, n);
}
void BinaryScalarI32Kernel(BinaryOp op, int32_t* dst, const int32_t* a, int32_t s, size_t n) {
  BinaryScalarKernel(op, dst, a, s, n);
}

void UnaryF32Kernel(UnaryOp op, float* dst, const float* src, size_t n) {
  const hn::ScalableTag<float> d;
  const auto one = hn::Set(d, 1.0f);
  const auto map = [&](auto f) { Map1(d, dst, src, n, f); };
  switch (op) {
    case UnaryOp::Exp: return map([&](auto v) { return ExpF32(d, v); });
    case UnaryOp::Log: return map([&](auto v) { return LogF32(d, v); });
    case UnaryOp::Sqrt: return map([](auto v) { return hn::Sqrt(v); });
    // True divisions: the ApproximateReciprocal* instructions keep only about 12 bits.
    case UnaryOp::Rsqrt: return map([&](auto v) { return hn::Div(one, hn::Sqrt(v)); });
    case UnaryOp::Recip: return map([&](auto v) { return hn::Div(one, v); });
    // Zero where v <= 0: NaN compares false and passes through, -0 becomes +0.
    case UnaryOp::Relu: return map([&](auto v) { return hn::IfThenZeroElse(hn::Le(v, hn::Zero(d)), v); });
    case UnaryOp::Abs: return map([](auto v) { return hn::Abs(v); });
    case UnaryOp::Neg: return map([](auto v) { return hn::Neg(v); });
    case UnaryOp::Sin:
    case UnaryOp::Cos: return;  // scalar, see UnaryF32
  }
}

void LeakyReluF32Kernel(float* dst, const float* src, float slope, size_t n) {
  const hn::ScalableTag<float> d;
  const auto vs = hn::Set(d, slope);
  // A NaN compares false and becomes slope * NaN, still NaN.
  Map1(d, dst, src, n, [&](auto v) { return hn::IfThenElse(hn::Gt(v, hn::Zero(d)), v, hn::Mul(v, vs)); });
}

// Relu, Abs and Neg only; the caller rejects the others.
void UnaryI32Kernel(UnaryOp op, int32_t* dst, const int32_t* src, size_t n) {
  const hn::ScalableTag<int32_t> d;
  const auto map = [&](auto f) { Map1(d, dst, src, n, f); };
  switch (op) {
    case UnaryOp::Relu: return map([&](auto v) { return hn::Max(v, hn::Zero(d)); });
    case UnaryOp::Abs: return map([](auto v) { return hn::Abs(v); });
    case UnaryOp::Neg: return map([](auto v) { return hn::Neg(v); });
    default: return;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace pypto::sim
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <cmath>

namespace pypto::sim {

HWY_EXPORT(BinaryF32Kernel);
HWY_EXPORT(BinaryI32Kernel);
HWY_EXPORT(BinaryScalarF32Kernel);
HWY_EXPORT(BinaryScalarI32Kernel);
HWY_EXPORT(UnaryF32Kernel);
HWY_EXPORT(LeakyReluF32Kernel);
HWY_EXPORT(UnaryI32Kernel);

namespace {

// No vector unit divides integers. Truncates toward zero; INT32_MIN / -1 wraps instead of trapping.
int32_t DivideI32(int32_t x, int32_t y) {
  return y == -1 ? static_cast<int32_t>(0u - static_cast<uint32_t>(x)) : x / y;
}

// The remainder of DivideI32, signed as the dividend; x % -1 is 0 (INT32_MIN % -1 would trap).
int32_t FmodI32(int32_t x, int32_t y) { return y == -1 ? 0 : x % y; }

// FmodI32 moved into the divisor's sign.
int32_t RemI32(int32_t x, int32_t y) {
  const int32_t r = FmodI32(x, y);
  return r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
}

// The ops without a vector form, one element at a time: integer Div, Fmod and Rem (y != 0).
int32_t ScalarI32(BinaryOp op, int32_t x, int32_t y) {
  if (op == BinaryOp::Div) return DivideI32(x, y);
  return op == BinaryOp::Rem ? RemI32(x, y) : FmodI32(x, y);
}

bool HasVectorForm(BinaryOp op) { return op != BinaryOp::Div && op != BinaryOp::Fmod && op != BinaryOp::Rem; }

// std::fmod is exact, so a float remainder needs no care beyond calling it; no vector unit has it.
// Rem adds the divisor to a remainder of the other sign (torch.remainder's own formula).
void RemainderF32(BinaryOp op, float* dst, const float* a, const float* b, float s, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float y = b ? b[i] : s;
    const float r = std::fmod(a[i], y);
    dst[i] = op == BinaryOp::Rem && r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
  }
}

}  // namespace

void BinaryF32(BinaryOp op, float* dst, const float* a, const float* b, size_t n) {
  if (op == BinaryOp::Fmod || op == BinaryOp::Rem) return RemainderF32(op, dst, a, b, 0.0f, n);
  HWY_DYNAMIC_DISPATCH(BinaryF32Kernel)(op, dst, a, b, n);
}

bool BinaryI32(BinaryOp op, int32_t* dst, const int32_t* a, const int32_t* b, size_t n) {
  if (HasVectorForm(op)) {
    HWY_DYNAMIC_DISPATCH(BinaryI32Kernel)(op, dst, a, b, n);
    return true;
  }
  for (size_t i = 0; i < n; ++i) {
    if (b[i] == 0) return false;
    dst[i] = ScalarI32(op, a[i], b[i]);
  }
  return true;
}

void BinaryScalarF32(BinaryOp op, float* dst, const float* a, float s, size_t n) {
  if (op == BinaryOp::Fmod || op == BinaryOp::Rem) return RemainderF32(op, dst, a, nullptr, s, n);
  HWY_DYNAMIC_DISPATCH(BinaryScalarF32Kernel)(op, dst, a, s, n);
}

bool BinaryScalarI32(BinaryOp op, int32_t* dst, const int32_t* a, int32_t s, size_t n) {
  if (HasVectorForm(op)) {
    HWY_DYNAMIC_DISPATCH(BinaryScalarI32Kernel)(op, dst, a, s, n);
    return true;
  }
  if (s == 0) return false;
  for (size_t i = 0; i < n; ++i) dst[i] = ScalarI32(op, a[i], s);
  return true;
}

void UnaryF32(UnaryOp op, float* dst, const float* src, size_t n) {
  // Highway's Sin and Cos hold only on about [-39000, 39000] and are 3 ULP off; double and one
  // rounding are correct everywhere (inf and NaN give NaN) at a cost that small tiles do not notice.
  if (op == UnaryOp::Sin || op == UnaryOp::Cos) {
    for (size_t i = 0; i < n; ++i) {
      const double x = src[i];
      dst[i] = static_cast<float>(op == UnaryOp::Sin ? std::sin(x) : std::cos(x));
    }
    return;
  }
  HWY_DYNAMIC_DISPATCH(UnaryF32Kernel)(op, dst, src, n);
}

void LeakyReluF32(float* dst, const float* src, float slope, size_t n) {
  HWY_DYNAMIC_DISPATCH(LeakyReluF32Kernel)(dst, src, slope, n);
}

void PreluF32(float* dst, const float* a, const float* slope, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = a[i] > 0.0f || std::isnan(a[i]) ? a[i] : a[i] * slope[i];
}

void BitwiseNot(void* dst, const void* src, size_t bytes) {
  auto* out = static_cast<unsigned char*>(dst);
  const auto* in = static_cast<const unsigned char*>(src);
  for (size_t i = 0; i < bytes; ++i) out[i] = static_cast<unsigned char>(~in[i]);
}

bool UnaryI32(UnaryOp op, int32_t* dst, const int32_t* src, size_t n) {
  if (op != UnaryOp::Relu && op != UnaryOp::Abs && op != UnaryOp::Neg) return false;
  HWY_DYNAMIC_DISPATCH(UnaryI32Kernel)(op, dst, src, n);
  return true;
}

}  // namespace pypto::sim
#endif  // HWY_ONCE
