// Element-wise kernels, compiled once per Highway target (foreach_target re-includes this file).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tile_ops.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "tile_ops.h"

HWY_BEFORE_NAMESPACE();
namespace pypto::sim {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// dst[i] = op(a[i], b[i]). Each vector is loaded before its result is stored, so dst may alias a or b.
template <class VecOp, class ScalarOp, typename T>
HWY_INLINE void Apply(T* dst, const T* a, const T* b, size_t n, VecOp vop, ScalarOp sop) {
  const hn::ScalableTag<T> d;
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;
  if (n >= 2 * lanes) {
    for (; i + 2 * lanes <= n; i += 2 * lanes) {
      const auto a0 = hn::LoadU(d, a + i);
      const auto b0 = hn::LoadU(d, b + i);
      const auto a1 = hn::LoadU(d, a + i + lanes);
      const auto b1 = hn::LoadU(d, b + i + lanes);
      hn::StoreU(vop(a0, b0), d, dst + i);
      hn::StoreU(vop(a1, b1), d, dst + i + lanes);
    }
  }
  for (; i + lanes <= n; i += lanes) hn::StoreU(vop(hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, dst + i);
  for (; i < n; ++i) dst[i] = sop(a[i], b[i]);
}

void AddF32(float* dst, const float* a, const float* b, size_t n) {
  Apply(dst, a, b, n, [](auto x, auto y) { return hn::Add(x, y); }, [](float x, float y) { return x + y; });
}
void SubF32(float* dst, const float* a, const float* b, size_t n) {
  Apply(dst, a, b, n, [](auto x, auto y) { return hn::Sub(x, y); }, [](float x, float y) { return x - y; });
}
void MulF32(float* dst, const float* a, const float* b, size_t n) {
  Apply(dst, a, b, n, [](auto x, auto y) { return hn::Mul(x, y); }, [](float x, float y) { return x * y; });
}
void DivF32(float* dst, const float* a, const float* b, size_t n) {
  Apply(dst, a, b, n, [](auto x, auto y) { return hn::Div(x, y); }, [](float x, float y) { return x / y; });
}

// Scalar fallbacks wrap through uint32_t, as the vector units do.
inline int32_t Wrap(uint32_t v) { return static_cast<int32_t>(v); }

void AddI32(int32_t* dst, const int32_t* a, const int32_t* b, size_t n) {
  Apply(dst, a, b, n, [](auto x, auto y) { return hn::Add(x, y); },
        [](int32_t x, int32_t y) { return Wrap(static_cast<uint32_t>(x) + static_cast<uint32_t>(y)); });
}
void SubI32(int32_t* dst, const int32_t* a, const int32_t* b, size_t n) {
  Apply(dst, a, b, n, [](auto x, auto y) { return hn::Sub(x, y); },
        [](int32_t x, int32_t y) { return Wrap(static_cast<uint32_t>(x) - static_cast<uint32_t>(y)); });
}
void MulI32(int32_t* dst, const int32_t* a, const int32_t* b, size_t n) {
  Apply(dst, a, b, n, [](auto x, auto y) { return x * y; },
        [](int32_t x, int32_t y) { return Wrap(static_cast<uint32_t>(x) * static_cast<uint32_t>(y)); });
}

const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace pypto::sim
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace pypto::sim {

HWY_EXPORT(AddF32);
HWY_EXPORT(SubF32);
HWY_EXPORT(MulF32);
HWY_EXPORT(DivF32);
HWY_EXPORT(AddI32);
HWY_EXPORT(SubI32);
HWY_EXPORT(MulI32);
HWY_EXPORT(TargetName);

void BinaryF32(BinaryOp op, float* dst, const float* a, const float* b, size_t n) {
  switch (op) {
    case BinaryOp::Add: return HWY_DYNAMIC_DISPATCH(AddF32)(dst, a, b, n);
    case BinaryOp::Sub: return HWY_DYNAMIC_DISPATCH(SubF32)(dst, a, b, n);
    case BinaryOp::Mul: return HWY_DYNAMIC_DISPATCH(MulF32)(dst, a, b, n);
    case BinaryOp::Div: return HWY_DYNAMIC_DISPATCH(DivF32)(dst, a, b, n);
  }
}

bool BinaryI32(BinaryOp op, int32_t* dst, const int32_t* a, const int32_t* b, size_t n) {
  switch (op) {
    case BinaryOp::Add: HWY_DYNAMIC_DISPATCH(AddI32)(dst, a, b, n); return true;
    case BinaryOp::Sub: HWY_DYNAMIC_DISPATCH(SubI32)(dst, a, b, n); return true;
    case BinaryOp::Mul: HWY_DYNAMIC_DISPATCH(MulI32)(dst, a, b, n); return true;
    case BinaryOp::Div:
      // No vector unit divides integers; INT32_MIN / -1 wraps instead of trapping.
      for (size_t i = 0; i < n; ++i) {
        const int32_t x = a[i], y = b[i];
        if (y == 0) return false;
        dst[i] = y == -1 ? static_cast<int32_t>(0u - static_cast<uint32_t>(x)) : x / y;
      }
      return true;
  }
  return true;
}

const char* TileOpsTarget() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }

}  // namespace pypto::sim
#endif  // HWY_ONCE
