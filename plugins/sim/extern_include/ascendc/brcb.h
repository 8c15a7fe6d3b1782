// Brcb: each repeat takes eight consecutive elements of src and fills one 32-byte block of dst with
// each (block j of repeat r at dstRepStride * r + dstBlkStride * j blocks).
#ifndef PYPTO_SIM_ASCENDC_BRCB_H_
#define PYPTO_SIM_ASCENDC_BRCB_H_

#include <algorithm>
#include <cstdint>

#include "ascendc/local_tensor.h"

namespace AscendC {

struct BrcbRepeatParams {
  uint16_t dstBlkStride = 1;
  uint16_t dstRepStride = 8;
  BrcbRepeatParams() = default;
  BrcbRepeatParams(uint16_t blk, uint16_t rep) : dstBlkStride(blk), dstRepStride(rep) {}
};

template <typename T>
inline void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint8_t repeatTimes,
                 const BrcbRepeatParams& params) {
  constexpr int kPerBlock = 32 / sizeof(T);
  T* d = dst.GetPhyAddr();
  const T* s = src.GetPhyAddr();
  for (uint32_t r = 0; r < repeatTimes; ++r)
    for (uint32_t j = 0; j < 8; ++j) {
      T* block = d + (uint64_t{r} * params.dstRepStride + uint64_t{j} * params.dstBlkStride) * kPerBlock;
      std::fill(block, block + kPerBlock, s[r * 8 + j]);
    }
}

}  // namespace AscendC

#endif  // PYPTO_SIM_ASCENDC_BRCB_H_
