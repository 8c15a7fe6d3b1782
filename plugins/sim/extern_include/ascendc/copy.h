// Copy: a vector-unit move within UB, mask + repeatTimes with CopyRepeatParams (block strides and
// repeat sizes in 32-byte blocks). Lanes are moved in order, so the in-place broadcasts kernels
// build from it (copying a row onto the next) read what earlier repeats wrote.
#ifndef PYPTO_SIM_ASCENDC_COPY_H_
#define PYPTO_SIM_ASCENDC_COPY_H_

#include <cstdint>

#include "ascendc/local_tensor.h"
#include "ascendc/vector_mask.h"

namespace AscendC {

struct CopyRepeatParams {
  uint16_t dstStride = 1;  // between a repeat's blocks
  uint16_t srcStride = 1;
  uint16_t dstRepeatSize = 8;  // between repeats
  uint16_t srcRepeatSize = 8;
  CopyRepeatParams() = default;
  CopyRepeatParams(uint16_t dst_stride, uint16_t src_stride, uint16_t dst_repeat, uint16_t src_repeat)
      : dstStride(dst_stride), srcStride(src_stride), dstRepeatSize(dst_repeat), srcRepeatSize(src_repeat) {}
};

namespace detail {

template <typename T>
inline void CopyRepeat(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LaneMask& mask, uint8_t repeat_times,
                       const CopyRepeatParams& p) {
  T* d = dst.GetPhyAddr();
  const T* s = src.GetPhyAddr();
  const UnaryRepeatParams walk(p.dstStride, p.srcStride, static_cast<uint8_t>(p.dstRepeatSize),
                               static_cast<uint8_t>(p.srcRepeatSize));
  ForEachUnaryLane<T, T>(mask, repeat_times, walk, [&](uint64_t od, uint64_t os) { d[od] = s[os]; });
}

}  // namespace detail

template <typename T, bool isSetMask = true>
inline void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask, const uint8_t repeatTimes,
                 const CopyRepeatParams& params) {
  detail::CopyRepeat(dst, src, detail::TakeMask<isSetMask>(mask), repeatTimes, params);
}
template <typename T, bool isSetMask = true>
inline void Copy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],
                 const uint8_t repeatTimes, const CopyRepeatParams& params) {
  detail::CopyRepeat(dst, src, detail::TakeMask<isSetMask>(mask), repeatTimes, params);
}

}  // namespace AscendC

#endif  // PYPTO_SIM_ASCENDC_COPY_H_
