// Element-wise unary math: Exp, Ln, Abs, Sqrt, Rsqrt, Reciprocal, Relu, Not, in the count form and
// the mask + repeatTimes + UnaryRepeatParams forms. Floating types compute in float.
#ifndef PYPTO_SIM_ASCENDC_VECTOR_UNARY_H_
#define PYPTO_SIM_ASCENDC_VECTOR_UNARY_H_

#include <cmath>
#include <cstdint>

#include "ascendc/local_tensor.h"
#include "ascendc/vector_mask.h"
#include "ascendc/vector_order.h"

namespace AscendC {
namespace detail {

template <typename D, typename S, typename Op>
inline void UnaryCount(const LocalTensor<D>& dst, const LocalTensor<S>& src, int32_t count, Op op,
                       const char* what = "", SourceLine where = {}) {
  if (where.file) {
    VectorReads(what, src, uint64_t(count > 0 ? count : 0) * sizeof(S), where);
    VectorWrote(what, dst, uint64_t(count > 0 ? count : 0) * sizeof(D), where);
  }
  D* d = dst.GetPhyAddr();
  const S* x = src.GetPhyAddr();
  for (int32_t i = 0; i < count; ++i) d[i] = Narrow<D>(op(Widen(x[i])));
}

template <typename D, typename S, typename Op>
inline void UnaryRepeat(const LocalTensor<D>& dst, const LocalTensor<S>& src, const LaneMask& mask,
                        uint8_t repeat_times, const UnaryRepeatParams& params, Op op, const char* what = "",
                        SourceLine where = {}) {
  if (where.file) {
    constexpr int kLanes = kRepeatBytes / (sizeof(D) > sizeof(S) ? sizeof(D) : sizeof(S));
    const uint32_t repeats = mask.Repeats(repeat_times, kLanes);
    VectorReads(what, src, RepeatSpanBytes<S>(repeats, kLanes, params.srcBlkStride, params.srcRepStride), where);
    VectorWrote(what, dst, RepeatSpanBytes<D>(repeats, kLanes, params.dstBlkStride, params.dstRepStride), where);
  }
  D* d = dst.GetPhyAddr();
  const S* x = src.GetPhyAddr();
  ForEachUnaryLane<D, S>(mask, repeat_times, params,
                         [&](uint64_t od, uint64_t os) { d[od] = Narrow<D>(op(Widen(x[os]))); });
}

}  // namespace detail

#define PYPTO_SIM_ASCENDC_UNARY(Name, expr)                                                                     \
  template <typename T>                                                                                        \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count,                \
                   detail::SourceLine where = detail::SourceLine::Here()) {                                    \
    detail::UnaryCount(dst, src, count, [](auto a) { return expr; }, #Name, where);                            \
  }                                                                                                            \
  template <typename T, bool isSetMask = true>                                                                 \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask,                        \
                   const uint8_t repeatTimes, const UnaryRepeatParams& params,                                 \
                   detail::SourceLine where = detail::SourceLine::Here()) {                                    \
    detail::UnaryRepeat(dst, src, detail::TakeMask<isSetMask>(mask), repeatTimes, params,                      \
                        [](auto a) { return expr; }, #Name, where);                                            \
  }                                                                                                            \
  template <typename T, bool isSetMask = true>                                                                 \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],                \
                   const uint8_t repeatTimes, const UnaryRepeatParams& params,                                 \
                   detail::SourceLine where = detail::SourceLine::Here()) {                                    \
    detail::UnaryRepeat(dst, src, detail::TakeMask<isSetMask>(mask), repeatTimes, params,                      \
                        [](auto a) { return expr; }, #Name, where);                                            \
  }

PYPTO_SIM_ASCENDC_UNARY(Exp, std::exp(a))
PYPTO_SIM_ASCENDC_UNARY(Ln, std::log(a))
PYPTO_SIM_ASCENDC_UNARY(Abs, a < 0 ? -a : a)
PYPTO_SIM_ASCENDC_UNARY(Sqrt, std::sqrt(a))
PYPTO_SIM_ASCENDC_UNARY(Rsqrt, 1 / std::sqrt(a))
PYPTO_SIM_ASCENDC_UNARY(Reciprocal, 1 / a)
PYPTO_SIM_ASCENDC_UNARY(Relu, a > 0 ? a : decltype(a){0})
PYPTO_SIM_ASCENDC_UNARY(Not, ~a)

#undef PYPTO_SIM_ASCENDC_UNARY

}  // namespace AscendC

#endif  // PYPTO_SIM_ASCENDC_VECTOR_UNARY_H_
