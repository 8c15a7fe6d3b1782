// BroadCast<T, dim, axis>(dst, src, dstShape, srcShape[, tmp]): src, of srcShape with extent 1 along
// `axis`, repeated along that axis to dstShape (row-major, dense). dim 1 fills dst with src[0]; dim 2
// with axis 0 copies src's one row to every row, with axis 1 src's one value per row across it.
// The temporary buffer is not needed here and is left alone.
#ifndef PYPTO_SIM_ASCENDC_BROADCAST_H_
#define PYPTO_SIM_ASCENDC_BROADCAST_H_

#include <cstdint>

#include "ascendc/local_tensor.h"

namespace AscendC {

template <typename T, int32_t dim, int32_t axis, bool isReuseSource = false>
inline void BroadCast(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t dstShape[],
                      const uint32_t srcShape[]) {
  static_assert(dim == 1 || dim == 2, "BroadCast: dim is 1 or 2");
  static_assert(axis >= 0 && axis < dim, "BroadCast: axis is below dim");
  (void)srcShape;
  if constexpr (dim == 1) {
    for (uint32_t i = 0; i < dstShape[0]; ++i) dst.SetValue(i, src.GetValue(0));
  } else {
    const uint32_t rows = dstShape[0], cols = dstShape[1];
    for (uint32_t r = 0; r < rows; ++r)
      for (uint32_t c = 0; c < cols; ++c) dst.SetValue(r * cols + c, src.GetValue(axis == 0 ? c : r));
  }
}

template <typename T, int32_t dim, int32_t axis, bool isReuseSource = false>
inline void BroadCast(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t dstShape[],
                      const uint32_t srcShape[], const LocalTensor<uint8_t>& tmp) {
  (void)tmp;
  BroadCast<T, dim, axis, isReuseSource>(dst, src, dstShape, srcShape);
}

}  // namespace AscendC

#endif  // PYPTO_SIM_ASCENDC_BROADCAST_H_
