// How a vector instruction walks its operands. One repeat covers 256 bytes of the widest operand as
// eight 32-byte blocks; within a repeat the mask picks the lanes that compute (bit i of the low word
// for lane i < 64, of the high word for lanes 64..127; a count mask n means the first n lanes). Block
// strides step between a repeat's blocks and repeat strides between repeats, both in 32-byte blocks.
// In counter mode (SetMaskCount) the mask is instead the number of elements, and the repeat count
// follows from it. Count-form APIs (`Add(dst, a, b, count)`) walk `count` consecutive elements.
#ifndef PYPTO_SIM_ASCENDC_VECTOR_MASK_H_
#define PYPTO_SIM_ASCENDC_VECTOR_MASK_H_

#include <cstdint>

#include "ascendc/core_context.h"

namespace AscendC {

inline constexpr uint64_t MASK_PLACEHOLDER = 0;
inline constexpr uint64_t MASK_PLACEHOLDER_LIST[2] = {0, 0};

enum class MaskMode : uint8_t { NORMAL = 0, COUNTER };

struct BinaryRepeatParams {
  uint8_t dstBlkStride = 1;
  uint8_t src0BlkStride = 1;
  uint8_t src1BlkStride = 1;
  uint8_t dstRepStride = 8;
  uint8_t src0RepStride = 8;
  uint8_t src1RepStride = 8;
  bool repeatStrideMode = false;
  bool strideSizeMode = false;
  BinaryRepeatParams() = default;
  BinaryRepeatParams(uint8_t dst_blk, uint8_t src0_blk, uint8_t src1_blk, uint8_t dst_rep, uint8_t src0_rep,
                     uint8_t src1_rep)
      : dstBlkStride(dst_blk), src0BlkStride(src0_blk), src1BlkStride(src1_blk), dstRepStride(dst_rep),
        src0RepStride(src0_rep), src1RepStride(src1_rep) {}
};

struct UnaryRepeatParams {
  uint16_t dstBlkStride = 1;
  uint16_t srcBlkStride = 1;
  uint8_t dstRepStride = 8;
  uint8_t srcRepStride = 8;
  bool repeatStrideMode = false;
  bool strideSizeMode = false;
  UnaryRepeatParams() = default;
  UnaryRepeatParams(uint16_t dst_blk, uint16_t src_blk, uint8_t dst_rep, uint8_t src_rep)
      : dstBlkStride(dst_blk), srcBlkStride(src_blk), dstRepStride(dst_rep), srcRepStride(src_rep) {}
};

template <typename T, MaskMode mode = MaskMode::NORMAL>
inline void SetVectorMask(uint64_t high, uint64_t low) {
  detail::t_registers.mask_high = high;
  detail::t_registers.mask_low = low;
}
// NORMAL: the first `length` lanes; COUNTER: `length` elements.
template <typename T, MaskMode mode = MaskMode::NORMAL>
inline void SetVectorMask(int32_t length) {
  auto& r = detail::t_registers;
  if (mode == MaskMode::COUNTER || r.counter_mode) {
    r.mask_low = static_cast<uint64_t>(length);
    r.mask_high = 0;
    return;
  }
  r.mask_low = length >= 64 ? ~0ull : (1ull << length) - 1;
  r.mask_high = length >= 128 ? ~0ull : length <= 64 ? 0 : (1ull << (length - 64)) - 1;
}
inline void ResetMask() {
  detail::t_registers.mask_low = ~0ull;
  detail::t_registers.mask_high = ~0ull;
}
inline void SetMaskNorm() { detail::t_registers.counter_mode = false; }
inline void SetMaskCount() { detail::t_registers.counter_mode = true; }

namespace detail {

inline constexpr int kRepeatBytes = 256;

// The lanes one repeat computes and how many repeats run, from the instruction's mask argument
// (applied to the mask register when isSetMask) or from the register.
struct LaneMask {
  uint64_t low = ~0ull, high = ~0ull;
  bool counter = false;
  uint64_t count = 0;  // counter mode: elements in all

  bool Active(int lane, uint32_t repeat, int lanes) const {
    if (counter) return uint64_t{repeat} * lanes + lane < count;
    return lane < 64 ? (low >> lane) & 1 : (high >> (lane - 64)) & 1;
  }
  uint32_t Repeats(uint32_t repeat_times, int lanes) const {
    return counter ? static_cast<uint32_t>((count + lanes - 1) / lanes) : repeat_times;
  }
};

template <bool isSetMask>
inline LaneMask TakeMask(uint64_t count_mask) {
  if (isSetMask) SetVectorMask<void>(static_cast<int32_t>(count_mask));
  const auto& r = t_registers;
  return LaneMask{r.mask_low, r.mask_high, r.counter_mode, r.mask_low};
}
template <bool isSetMask>
inline LaneMask TakeMask(const uint64_t bits[]) {
  if (isSetMask) SetVectorMask<void>(bits[1], bits[0]);
  const auto& r = t_registers;
  return LaneMask{r.mask_low, r.mask_high, r.counter_mode, r.mask_low};
}

// Element offset of `lane` in repeat `repeat` of an operand of T with the given strides (in blocks).
template <typename T>
inline uint64_t LaneOffset(int lane, uint32_t repeat, uint32_t blk_stride, uint32_t rep_stride) {
  constexpr int kPerBlock = 32 / sizeof(T);
  return (uint64_t{repeat} * rep_stride + uint64_t(lane / kPerBlock) * blk_stride) * kPerBlock + lane % kPerBlock;
}

// Calls visit(dst_offset, src0_offset, src1_offset) for every computing lane; lanes per repeat
// follow the widest of the operand types.
template <typename D, typename S0, typename S1, typename Visit>
inline void ForEachBinaryLane(const LaneMask& mask, uint32_t repeat_times, const BinaryRepeatParams& p, Visit visit) {
  constexpr int kWidest = sizeof(D) > sizeof(S0) ? (sizeof(D) > sizeof(S1) ? sizeof(D) : sizeof(S1))
                                                  : (sizeof(S0) > sizeof(S1) ? sizeof(S0) : sizeof(S1));
  constexpr int kLanes = kRepeatBytes / kWidest;
  const uint32_t repeats = mask.Repeats(repeat_times, kLanes);
  for (uint32_t r = 0; r < repeats; ++r)
    for (int lane = 0; lane < kLanes; ++lane)
      if (mask.Active(lane, r, kLanes))
        visit(LaneOffset<D>(lane, r, p.dstBlkStride, p.dstRepStride),
              LaneOffset<S0>(lane, r, p.src0BlkStride, p.src0RepStride),
              LaneOffset<S1>(lane, r, p.src1BlkStride, p.src1RepStride));
}

template <typename D, typename S, typename Visit>
inline void ForEachUnaryLane(const LaneMask& mask, uint32_t repeat_times, const UnaryRepeatParams& p, Visit visit) {
  constexpr int kLanes = kRepeatBytes / (sizeof(D) > sizeof(S) ? sizeof(D) : sizeof(S));
  const uint32_t repeats = mask.Repeats(repeat_times, kLanes);
  for (uint32_t r = 0; r < repeats; ++r)
    for (int lane = 0; lane < kLanes; ++lane)
      if (mask.Active(lane, r, kLanes))
        visit(LaneOffset<D>(lane, r, p.dstBlkStride, p.dstRepStride),
              LaneOffset<S>(lane, r, p.srcBlkStride, p.srcRepStride));
}

}  // namespace detail
}  // namespace AscendC

#endif  // PYPTO_SIM_ASCENDC_VECTOR_MASK_H_
