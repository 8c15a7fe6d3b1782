// Reductions. ReduceSum/Max/Min (count form) leave the result in dst[0] (and with calIndex the
// position of the max/min, as an integer of T's size, in dst[1]). WholeReduce* reduce each repeat's
// computing lanes to one result at dst[r * dstRepStride] (value and index: two slots per result,
// ordered by ReduceOrder). BlockReduce* reduce each 32-byte block of a repeat to one value; a
// repeat's eight results land at dst[r * dstRepStride * 8]. Sums accumulate in float.
#ifndef PYPTO_SIM_ASCENDC_REDUCE_H_
#define PYPTO_SIM_ASCENDC_REDUCE_H_

#include <cstdint>
#include <cstring>

#include "ascendc/local_tensor.h"
#include "ascendc/vector_mask.h"

namespace AscendC {

enum class ReduceOrder : uint8_t { ORDER_VALUE_INDEX = 0, ORDER_INDEX_VALUE, ORDER_ONLY_VALUE, ORDER_ONLY_INDEX };

namespace detail {

enum class ReduceKind { Sum, Max, Min };

// A running reduction over values of T, remembering the first position of the max / min.
template <typename T>
struct Reduction {
  ReduceKind kind;
  ComputeType<T> value{};
  uint32_t index = 0;
  bool any = false;

  void Add(ComputeType<T> x, uint32_t position) {
    if (!any) {
      value = x, index = position, any = true;
      return;
    }
    if (kind == ReduceKind::Sum) value += x;
    else if (kind == ReduceKind::Max ? x > value : x < value) value = x, index = position;
  }
};

template <typename T>
inline T IndexAsElement(uint32_t index) {
  T out{};
  if constexpr (sizeof(T) == 2) {
    const auto narrow = static_cast<uint16_t>(index);
    std::memcpy(&out, &narrow, sizeof(out));
  } else if constexpr (sizeof(T) == 4) {
    std::memcpy(&out, &index, sizeof(out));
  }
  return out;
}

template <typename T>
inline void ReduceCount(ReduceKind kind, const LocalTensor<T>& dst, const LocalTensor<T>& src, int32_t count,
                        bool with_index) {
  Reduction<T> r{kind};
  for (int32_t i = 0; i < count; ++i) r.Add(Widen(src.GetValue(i)), static_cast<uint32_t>(i));
  dst.SetValue(0, Narrow<T>(r.value));
  if (with_index) dst.SetValue(1, IndexAsElement<T>(r.index));
}

template <typename T>
inline void WholeReduce(ReduceKind kind, const LocalTensor<T>& dst, const LocalTensor<T>& src, const LaneMask& mask,
                        int32_t repeat_times, int32_t dst_rep_stride, int32_t src_blk_stride, int32_t src_rep_stride,
                        ReduceOrder order) {
  constexpr int kLanes = kRepeatBytes / sizeof(T);
  const T* s = src.GetPhyAddr();
  T* d = dst.GetPhyAddr();
  const bool pair = kind != ReduceKind::Sum &&
                    (order == ReduceOrder::ORDER_VALUE_INDEX || order == ReduceOrder::ORDER_INDEX_VALUE);
  const uint32_t repeats = mask.Repeats(static_cast<uint32_t>(repeat_times), kLanes);
  for (uint32_t r = 0; r < repeats; ++r) {
    Reduction<T> red{kind};
    for (int lane = 0; lane < kLanes; ++lane)
      if (mask.Active(lane, r, kLanes))
        red.Add(Widen(s[LaneOffset<T>(lane, r, src_blk_stride, src_rep_stride)]), static_cast<uint32_t>(lane));
    T* out = d + uint64_t{r} * dst_rep_stride * (pair ? 2 : 1);
    const T value = Narrow<T>(red.value), index = IndexAsElement<T>(red.index);
    if (kind == ReduceKind::Sum || order == ReduceOrder::ORDER_ONLY_VALUE) out[0] = value;
    else if (order == ReduceOrder::ORDER_ONLY_INDEX) out[0] = index;
    else if (order == ReduceOrder::ORDER_VALUE_INDEX) out[0] = value, out[1] = index;
    else out[0] = index, out[1] = value;
  }
}

template <typename T>
inline void BlockReduce(ReduceKind kind, const LocalTensor<T>& dst, const LocalTensor<T>& src, int32_t repeat_times,
                        const LaneMask& mask, int32_t dst_rep_stride, int32_t src_blk_stride, int32_t src_rep_stride) {
  constexpr int kLanes = kRepeatBytes / sizeof(T);
  constexpr int kPerBlock = 32 / sizeof(T);
  const T* s = src.GetPhyAddr();
  T* d = dst.GetPhyAddr();
  const uint32_t repeats = mask.Repeats(static_cast<uint32_t>(repeat_times), kLanes);
  for (uint32_t r = 0; r < repeats; ++r)
    for (int block = 0; block < 8; ++block) {
      Reduction<T> red{kind};
      for (int e = 0; e < kPerBlock; ++e) {
        const int lane = block * kPerBlock + e;
        if (mask.Active(lane, r, kLanes)) red.Add(Widen(s[LaneOffset<T>(lane, r, src_blk_stride, src_rep_stride)]), 0);
      }
      if (red.any) d[uint64_t{r} * dst_rep_stride * 8 + block] = Narrow<T>(red.value);
    }
}

}  // namespace detail

template <typename T>
inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work, int32_t count) {
  detail::ReduceCount(detail::ReduceKind::Sum, dst, src, count, false);
}
template <typename T>
inline void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work, int32_t count,
                      bool calIndex = false) {
  detail::ReduceCount(detail::ReduceKind::Max, dst, src, count, calIndex);
}
template <typename T>
inline void ReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work, int32_t count,
                      bool calIndex = false) {
  detail::ReduceCount(detail::ReduceKind::Min, dst, src, count, calIndex);
}

#define PYPTO_SIM_ASCENDC_WHOLE_REDUCE(Name, Kind, OrderParam, order)                                              \
  template <typename T, bool isSetMask = true>                                                                    \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,                      \
                   const int32_t repeatTimes, const int32_t dstRepStride, const int32_t srcBlkStride,              \
                   const int32_t srcRepStride OrderParam) {                                                        \
    detail::WholeReduce(detail::ReduceKind::Kind, dst, src, detail::TakeMask<isSetMask>(static_cast<uint64_t>(mask)), \
                        repeatTimes, dstRepStride, srcBlkStride, srcRepStride, order);                             \
  }                                                                                                               \
  template <typename T, bool isSetMask = true>                                                                    \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[],                   \
                   const int32_t repeatTimes, const int32_t dstRepStride, const int32_t srcBlkStride,              \
                   const int32_t srcRepStride OrderParam) {                                                        \
    detail::WholeReduce(detail::ReduceKind::Kind, dst, src, detail::TakeMask<isSetMask>(mask), repeatTimes,       \
                        dstRepStride, srcBlkStride, srcRepStride, order);                                          \
  }

#define PYPTO_SIM_ASCENDC_ORDER , ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX
PYPTO_SIM_ASCENDC_WHOLE_REDUCE(WholeReduceSum, Sum, , ReduceOrder::ORDER_ONLY_VALUE)
PYPTO_SIM_ASCENDC_WHOLE_REDUCE(WholeReduceMax, Max, PYPTO_SIM_ASCENDC_ORDER, order)
PYPTO_SIM_ASCENDC_WHOLE_REDUCE(WholeReduceMin, Min, PYPTO_SIM_ASCENDC_ORDER, order)
#undef PYPTO_SIM_ASCENDC_ORDER
#undef PYPTO_SIM_ASCENDC_WHOLE_REDUCE

#define PYPTO_SIM_ASCENDC_BLOCK_REDUCE(Name, Kind)                                                                 \
  template <typename T, bool isSetMask = true>                                                                    \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTimes,               \
                   const int32_t mask, const int32_t dstRepStride, const int32_t srcBlkStride,                    \
                   const int32_t srcRepStride) {                                                                   \
    detail::BlockReduce(detail::ReduceKind::Kind, dst, src, repeatTimes,                                          \
                        detail::TakeMask<isSetMask>(static_cast<uint64_t>(mask)), dstRepStride, srcBlkStride,     \
                        srcRepStride);                                                                             \
  }                                                                                                               \
  template <typename T, bool isSetMask = true>                                                                    \
  inline void Name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t repeatTimes,               \
                   const uint64_t mask[], const int32_t dstRepStride, const int32_t srcBlkStride,                 \
                   const int32_t srcRepStride) {                                                                   \
    detail::BlockReduce(detail::ReduceKind::Kind, dst, src, repeatTimes, detail::TakeMask<isSetMask>(mask),      \
                        dstRepStride, srcBlkStride, srcRepStride);                                                 \
  }

PYPTO_SIM_ASCENDC_BLOCK_REDUCE(BlockReduceSum, Sum)
PYPTO_SIM_ASCENDC_BLOCK_REDUCE(BlockReduceMax, Max)
PYPTO_SIM_ASCENDC_BLOCK_REDUCE(BlockReduceMin, Min)
#undef PYPTO_SIM_ASCENDC_BLOCK_REDUCE

}  // namespace AscendC

#endif  // PYPTO_SIM_ASCENDC_REDUCE_H_
