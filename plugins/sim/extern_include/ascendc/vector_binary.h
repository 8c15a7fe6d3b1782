// Element-wise tensor-tensor arithmetic: Add, Sub, Mul, Div, Max, Min (and the bitwise And, Or on
// integers), each in the count form and the mask + repeatTimes + BinaryRepeatParams forms. Floating
// types compute in float and round once.
#ifndef PYPTO_SIM_ASCENDC_VECTOR_BINARY_H_
#define PYPTO_SIM_ASCENDC_VECTOR_BINARY_H_

#include <algorithm>
#include <cstdint>

#include "ascendc/local_tensor.h"
#include "ascendc/vector_mask.h"
#include "ascendc/vector_order.h"

namespace AscendC {
namespace detail {

template <typename T, typename Op>
inline void BinaryCount(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b, int32_t count,
                        Op op, const char* what, SourceLine where) {
  const uint64_t bytes = uint64_t(count > 0 ? count : 0) * sizeof(T);
  VectorReads(what, a, bytes, where);
  VectorReads(what, b, bytes, where);
  VectorWrote(what, dst, bytes, where);
  T* d = dst.GetPhyAddr();
  const T* x = a.GetPhyAddr();
  const T* y = b.GetPhyAddr();
  for (int32_t i = 0; i < count; ++i) d[i] = Narrow<T>(op(Widen(x[i]), Widen(y[i])));
}

template <typename T, typename Op>
inline void BinaryRepeat(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b,
                         const LaneMask& mask, uint8_t repeat_times, const BinaryRepeatParams& params, Op op,
                         const char* what, SourceLine where) {
  constexpr int kLanes = kRepeatBytes / sizeof(T);
  const uint32_t repeats = mask.Repeats(repeat_times, kLanes);
  VectorReads(what, a, RepeatSpanBytes<T>(repeats, kLanes, params.src0BlkStride, params.src0RepStride), where);
  VectorReads(what, b, RepeatSpanBytes<T>(repeats, kLanes, params.src1BlkStride, params.src1RepStride), where);
  VectorWrote(what, dst, RepeatSpanBytes<T>(repeats, kLanes, params.dstBlkStride, params.dstRepStride), where);
  T* d = dst.GetPhyAddr();
  const T* x = a.GetPhyAddr();
  const T* y = b.GetPhyAddr();
  ForEachBinaryLane<T, T, T>(mask, repeat_times, params, [&](uint64_t od, uint64_t o0, uint64_t o1) {
    d[od] = Narrow<T>(op(Widen(x[o0]), Widen(y[o1])));
  });
}

}  // namespace detail

#define PYPTO_SIM_ASCENDC_BINARY(Name, expr)                                                                      \
  template <typename T>                                                                                          \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,            \
                   const int32_t& count, detail::SourceLine where = detail::SourceLine::Here()) {                \
    detail::BinaryCount(dst, src0, src1, count, [](auto a, auto b) { return expr; }, #Name, where);             \
  }                                                                                                              \
  template <typename T, bool isSetMask = true>                                                                   \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,            \
                   uint64_t mask, const uint8_t repeatTimes, const BinaryRepeatParams& params,                   \
                   detail::SourceLine where = detail::SourceLine::Here()) {                                      \
    detail::BinaryRepeat(dst, src0, src1, detail::TakeMask<isSetMask>(mask), repeatTimes, params,                \
                         [](auto a, auto b) { return expr; }, #Name, where);                                     \
  }                                                                                                              \
  template <typename T, bool isSetMask = true>                                                                   \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,            \
                   const uint64_t mask[], const uint8_t repeatTimes, const BinaryRepeatParams& params,           \
                   detail::SourceLine where = detail::SourceLine::Here()) {                                      \
    detail::BinaryRepeat(dst, src0, src1, detail::TakeMask<isSetMask>(mask), repeatTimes, params,                \
                         [](auto a, auto b) { return expr; }, #Name, where);                                     \
  }

PYPTO_SIM_ASCENDC_BINARY(Add, a + b)
PYPTO_SIM_ASCENDC_BINARY(Sub, a - b)
PYPTO_SIM_ASCENDC_BINARY(Mul, a* b)
PYPTO_SIM_ASCENDC_BINARY(Div, a / b)
PYPTO_SIM_ASCENDC_BINARY(Max, std::max(a, b))
PYPTO_SIM_ASCENDC_BINARY(Min, std::min(a, b))
PYPTO_SIM_ASCENDC_BINARY(And, a& b)
PYPTO_SIM_ASCENDC_BINARY(Or, a | b)

#undef PYPTO_SIM_ASCENDC_BINARY

}  // namespace AscendC

#endif  // PYPTO_SIM_ASCENDC_VECTOR_BINARY_H_
