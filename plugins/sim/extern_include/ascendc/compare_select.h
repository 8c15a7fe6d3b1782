// Compare / CompareScalar write one bit per element (bit i of byte i / 8, lowest first) into a
// uint8_t tensor; Select reads such a mask and picks src0 where the bit is set, else src1 (or the
// scalar). Count forms walk `count` elements; the repeat forms number mask bits continuously across
// repeats (repeat r, lane l: bit r * lanes + l).
#ifndef PYPTO_SIM_ASCENDC_COMPARE_SELECT_H_
#define PYPTO_SIM_ASCENDC_COMPARE_SELECT_H_

#include <cstdint>

#include "ascendc/local_tensor.h"
#include "ascendc/vector_mask.h"

namespace AscendC {

enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };
enum class SELMODE : uint8_t { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };

namespace detail {

template <typename V>
inline bool Holds(V a, V b, CMPMODE mode) {
  switch (mode) {
    case CMPMODE::LT: return a < b;
    case CMPMODE::GT: return a > b;
    case CMPMODE::EQ: return a == b;
    case CMPMODE::LE: return a <= b;
    case CMPMODE::GE: return a >= b;
    case CMPMODE::NE: return a != b;
  }
  return false;
}

inline void SetBit(uint8_t* bits, uint64_t index, bool value) {
  const uint8_t bit = static_cast<uint8_t>(1u << (index % 8));
  bits[index / 8] = value ? (bits[index / 8] | bit) : (bits[index / 8] & ~bit);
}
inline bool GetBit(const uint8_t* bits, uint64_t index) { return (bits[index / 8] >> (index % 8)) & 1; }

// Calls visit(bit, dst_offset, src0_offset, src1_offset) for every computing lane of a repeat form.
template <typename T, typename Visit>
inline void ForEachMaskedLane(const LaneMask& mask, uint32_t repeat_times, const BinaryRepeatParams& p, Visit visit) {
  constexpr int kLanes = kRepeatBytes / sizeof(T);
  const uint32_t repeats = mask.Repeats(repeat_times, kLanes);
  for (uint32_t r = 0; r < repeats; ++r)
    for (int lane = 0; lane < kLanes; ++lane)
      if (mask.Active(lane, r, kLanes))
        visit(uint64_t{r} * kLanes + lane, LaneOffset<T>(lane, r, p.dstBlkStride, p.dstRepStride),
              LaneOffset<T>(lane, r, p.src0BlkStride, p.src0RepStride),
              LaneOffset<T>(lane, r, p.src1BlkStride, p.src1RepStride));
}

}  // namespace detail

template <typename T, typename U>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE mode,
                    uint32_t count) {
  auto* bits = reinterpret_cast<uint8_t*>(dst.GetPhyAddr());
  for (uint32_t i = 0; i < count; ++i)
    detail::SetBit(bits, i, detail::Holds(detail::Widen(src0.GetValue(i)), detail::Widen(src1.GetValue(i)), mode));
}
template <typename T, typename U, bool isSetMask = true>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE mode,
                    const uint64_t mask, uint8_t repeatTimes, const BinaryRepeatParams& params) {
  auto* bits = reinterpret_cast<uint8_t*>(dst.GetPhyAddr());
  const T* a = src0.GetPhyAddr();
  const T* b = src1.GetPhyAddr();
  detail::ForEachMaskedLane<T>(detail::TakeMask<isSetMask>(mask), repeatTimes, params,
                               [&](uint64_t bit, uint64_t, uint64_t o0, uint64_t o1) {
                                 detail::SetBit(bits, bit, detail::Holds(detail::Widen(a[o0]), detail::Widen(b[o1]), mode));
                               });
}

template <typename T, typename U>
inline void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const detail::NoDeduce<T> scalar,
                          CMPMODE mode, uint32_t count) {
  auto* bits = reinterpret_cast<uint8_t*>(dst.GetPhyAddr());
  const auto s = detail::Widen(static_cast<T>(scalar));
  for (uint32_t i = 0; i < count; ++i) detail::SetBit(bits, i, detail::Holds(detail::Widen(src0.GetValue(i)), s, mode));
}
template <typename T, typename U, bool isSetMask = true>
inline void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const detail::NoDeduce<T> scalar,
                          CMPMODE mode, const uint64_t mask, uint8_t repeatTimes, const UnaryRepeatParams& params) {
  auto* bits = reinterpret_cast<uint8_t*>(dst.GetPhyAddr());
  const T* a = src0.GetPhyAddr();
  const auto s = detail::Widen(static_cast<T>(scalar));
  const BinaryRepeatParams binary(params.dstBlkStride, params.srcBlkStride, params.srcBlkStride, params.dstRepStride,
                                  params.srcRepStride, params.srcRepStride);
  detail::ForEachMaskedLane<T>(detail::TakeMask<isSetMask>(mask), repeatTimes, binary,
                               [&](uint64_t bit, uint64_t, uint64_t o0, uint64_t) {
                                 detail::SetBit(bits, bit, detail::Holds(detail::Widen(a[o0]), s, mode));
                               });
}

template <typename T, typename U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                   const LocalTensor<T>& src1, SELMODE, uint32_t count) {
  const auto* bits = reinterpret_cast<const uint8_t*>(selMask.GetPhyAddr());
  for (uint32_t i = 0; i < count; ++i) dst.SetValue(i, detail::GetBit(bits, i) ? src0.GetValue(i) : src1.GetValue(i));
}
template <typename T, typename U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                   const detail::NoDeduce<T> scalar, SELMODE, uint32_t count) {
  const auto* bits = reinterpret_cast<const uint8_t*>(selMask.GetPhyAddr());
  const T s = static_cast<T>(scalar);
  for (uint32_t i = 0; i < count; ++i) dst.SetValue(i, detail::GetBit(bits, i) ? src0.GetValue(i) : s);
}
template <typename T, typename U, bool isSetMask = true>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                   const LocalTensor<T>& src1, SELMODE, uint64_t mask, uint8_t repeatTimes,
                   const BinaryRepeatParams& params) {
  const auto* bits = reinterpret_cast<const uint8_t*>(selMask.GetPhyAddr());
  T* d = dst.GetPhyAddr();
  const T* a = src0.GetPhyAddr();
  const T* b = src1.GetPhyAddr();
  detail::ForEachMaskedLane<T>(detail::TakeMask<isSetMask>(mask), repeatTimes, params,
                               [&](uint64_t bit, uint64_t od, uint64_t o0, uint64_t o1) {
                                 d[od] = detail::GetBit(bits, bit) ? a[o0] : b[o1];
                               });
}
template <typename T, typename U, bool isSetMask = true>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                   const detail::NoDeduce<T> scalar, SELMODE, uint64_t mask, uint8_t repeatTimes,
                   const BinaryRepeatParams& params) {
  const auto* bits = reinterpret_cast<const uint8_t*>(selMask.GetPhyAddr());
  T* d = dst.GetPhyAddr();
  const T* a = src0.GetPhyAddr();
  const T s = static_cast<T>(scalar);
  detail::ForEachMaskedLane<T>(detail::TakeMask<isSetMask>(mask), repeatTimes, params,
                               [&](uint64_t bit, uint64_t od, uint64_t o0, uint64_t) {
                                 d[od] = detail::GetBit(bits, bit) ? a[o0] : s;
                               });
}

}  // namespace AscendC

#endif  // PYPTO_SIM_ASCENDC_COMPARE_SELECT_H_
