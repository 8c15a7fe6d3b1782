// Tensor-scalar arithmetic: Adds, Muls, Maxs, Mins (and ShiftLeft/ShiftRight on integers), in the
// count form and the mask + repeatTimes + UnaryRepeatParams forms. The scalar converts to T first.
#ifndef PYPTO_SIM_ASCENDC_VECTOR_SCALAR_H_
#define PYPTO_SIM_ASCENDC_VECTOR_SCALAR_H_

#include <algorithm>
#include <cstdint>

#include "ascendc/local_tensor.h"
#include "ascendc/vector_mask.h"
#include "ascendc/vector_order.h"

namespace AscendC {
namespace detail {

template <typename T, typename Op>
inline void ScalarCount(const LocalTensor<T>& dst, const LocalTensor<T>& src, T scalar, int32_t count, Op op,
                        const char* what, SourceLine where) {
  const uint64_t bytes = uint64_t(count > 0 ? count : 0) * sizeof(T);
  VectorReads(what, src, bytes, where);
  VectorWrote(what, dst, bytes, where);
  T* d = dst.GetPhyAddr();
  const T* x = src.GetPhyAddr();
  const auto s = Widen(scalar);
  for (int32_t i = 0; i < count; ++i) d[i] = Narrow<T>(op(Widen(x[i]), s));
}

template <typename T, typename Op>
inline void ScalarRepeat(const LocalTensor<T>& dst, const LocalTensor<T>& src, T scalar, const LaneMask& mask,
                         uint8_t repeat_times, const UnaryRepeatParams& params, Op op, const char* what,
                         SourceLine where) {
  constexpr int kLanes = kRepeatBytes / sizeof(T);
  const uint32_t repeats = mask.Repeats(repeat_times, kLanes);
  VectorReads(what, src, RepeatSpanBytes<T>(repeats, kLanes, params.srcBlkStride, params.srcRepStride), where);
  VectorWrote(what, dst, RepeatSpanBytes<T>(repeats, kLanes, params.dstBlkStride, params.dstRepStride), where);
  T* d = dst.GetPhyAddr();
  const T* x = src.GetPhyAddr();
  const auto s = Widen(scalar);
  ForEachUnaryLane<T, T>(mask, repeat_times, params,
                         [&](uint64_t od, uint64_t os) { d[od] = Narrow<T>(op(Widen(x[os]), s)); });
}

}  // namespace detail

#define PYPTO_SIM_ASCENDC_SCALAR(Name, expr)                                                                     \
  template <typename T>                                                                                         \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const detail::NoDeduce<T>& scalar,     \
                   const int32_t& count, detail::SourceLine where = detail::SourceLine::Here()) {               \
    detail::ScalarCount(dst, src, scalar, count, [](auto a, auto s) { return expr; }, #Name, where);            \
  }                                                                                                             \
  template <typename T, bool isSetMask = true>                                                                  \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const detail::NoDeduce<T>& scalar,     \
                   uint64_t mask, const uint8_t repeatTimes, const UnaryRepeatParams& params,                   \
                   detail::SourceLine where = detail::SourceLine::Here()) {                                     \
    detail::ScalarRepeat(dst, src, scalar, detail::TakeMask<isSetMask>(mask), repeatTimes, params,              \
                         [](auto a, auto s) { return expr; }, #Name, where);                                    \
  }                                                                                                             \
  template <typename T, bool isSetMask = true>                                                                  \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const detail::NoDeduce<T>& scalar,     \
                   const uint64_t mask[], const uint8_t repeatTimes, const UnaryRepeatParams& params,           \
                   detail::SourceLine where = detail::SourceLine::Here()) {                                     \
    detail::ScalarRepeat(dst, src, scalar, detail::TakeMask<isSetMask>(mask), repeatTimes, params,              \
                         [](auto a, auto s) { return expr; }, #Name, where);                                    \
  }

PYPTO_SIM_ASCENDC_SCALAR(Adds, a + s)
PYPTO_SIM_ASCENDC_SCALAR(Muls, a* s)
PYPTO_SIM_ASCENDC_SCALAR(Maxs, std::max(a, s))
PYPTO_SIM_ASCENDC_SCALAR(Mins, std::min(a, s))
PYPTO_SIM_ASCENDC_SCALAR(ShiftLeft, a << s)
PYPTO_SIM_ASCENDC_SCALAR(ShiftRight, a >> s)

#undef PYPTO_SIM_ASCENDC_SCALAR

}  // namespace AscendC

#endif  // PYPTO_SIM_ASCENDC_VECTOR_SCALAR_H_
