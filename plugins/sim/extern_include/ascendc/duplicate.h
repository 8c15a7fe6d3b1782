// Duplicate: a scalar into every computing lane, in the count form and the mask + repeatTimes form
// (dstBlockStride in blocks, dstRepeatStride in blocks).
#ifndef PYPTO_SIM_ASCENDC_DUPLICATE_H_
#define PYPTO_SIM_ASCENDC_DUPLICATE_H_

#include <algorithm>
#include <cstdint>

#include "ascendc/local_tensor.h"
#include "ascendc/vector_mask.h"

namespace AscendC {
namespace detail {

template <typename T>
inline void DuplicateRepeat(const LocalTensor<T>& dst, T value, const LaneMask& mask, uint8_t repeat_times,
                            uint16_t block_stride, uint8_t repeat_stride) {
  T* d = dst.GetPhyAddr();
  const UnaryRepeatParams params(block_stride, 1, repeat_stride, 8);
  ForEachUnaryLane<T, T>(mask, repeat_times, params, [&](uint64_t od, uint64_t) { d[od] = value; });
}

}  // namespace detail

template <typename T>
inline void Duplicate(const LocalTensor<T>& dst, const detail::NoDeduce<T>& value, const int32_t& count) {
  std::fill(dst.GetPhyAddr(), dst.GetPhyAddr() + count, value);
}
template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const detail::NoDeduce<T>& value, uint64_t mask,
                      const uint8_t repeatTimes, const uint16_t dstBlockStride, const uint8_t dstRepeatStride) {
  detail::DuplicateRepeat(dst, static_cast<T>(value), detail::TakeMask<isSetMask>(mask), repeatTimes, dstBlockStride,
                          dstRepeatStride);
}
template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const detail::NoDeduce<T>& value, const uint64_t mask[],
                      const uint8_t repeatTimes, const uint16_t dstBlockStride, const uint8_t dstRepeatStride) {
  detail::DuplicateRepeat(dst, static_cast<T>(value), detail::TakeMask<isSetMask>(mask), repeatTimes, dstBlockStride,
                          dstRepeatStride);
}

}  // namespace AscendC

#endif  // PYPTO_SIM_ASCENDC_DUPLICATE_H_
