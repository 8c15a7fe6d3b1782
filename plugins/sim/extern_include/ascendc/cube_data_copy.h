// DataCopy GM -> L1 with Nd2NzParams: ndNum row-major (ND) matrices of nValue rows and dValue
// columns, source rows srcDValue elements apart and matrices srcNdMatrixStride elements apart, each
// written to L1 in NZ order: row r's 32-byte block k lands at r * dstNzNStride + k * dstNzC0Stride
// blocks from the matrix's start, matrices dstNzMatrixStride elements apart. A last block that dValue
// does not fill is padded with zeros, as the MTE2 unit does. (The plain and DataCopyParams forms GM
// <-> L1 are the generic ones of data_copy.h.)
#ifndef PYPTO_SIM_ASCENDC_CUBE_DATA_COPY_H_
#define PYPTO_SIM_ASCENDC_CUBE_DATA_COPY_H_

#include <cstdint>
#include <cstring>

#include "ascendc/cube_layout.h"
#include "ascendc/global_tensor.h"
#include "ascendc/local_tensor.h"

namespace AscendC {

struct Nd2NzParams {
  uint16_t ndNum = 1;
  uint16_t nValue = 0;
  uint16_t dValue = 0;
  uint16_t srcNdMatrixStride = 0;
  uint16_t srcDValue = 0;
  uint16_t dstNzC0Stride = 0;
  uint16_t dstNzNStride = 1;
  uint16_t dstNzMatrixStride = 0;
  Nd2NzParams() = default;
  Nd2NzParams(uint16_t nd_num, uint16_t n, uint16_t d, uint16_t src_nd_matrix_stride, uint16_t src_d,
              uint16_t dst_c0_stride, uint16_t dst_n_stride, uint16_t dst_matrix_stride)
      : ndNum(nd_num), nValue(n), dValue(d), srcNdMatrixStride(src_nd_matrix_stride), srcDValue(src_d),
        dstNzC0Stride(dst_c0_stride), dstNzNStride(dst_n_stride), dstNzMatrixStride(dst_matrix_stride) {}
};

template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const Nd2NzParams& params) {
  constexpr uint32_t c0 = detail::kC0<T>;
  const uint64_t blocks = detail::CeilDiv(params.dValue, c0);
  for (uint64_t m = 0; m < params.ndNum; ++m) {
    const T* matrix = src.GetPhyAddr() + m * params.srcNdMatrixStride;
    T* nz = dst.GetPhyAddr() + m * params.dstNzMatrixStride;
    for (uint64_t r = 0; r < params.nValue; ++r) {
      const T* row = matrix + r * params.srcDValue;
      for (uint64_t k = 0; k < blocks; ++k) {
        T* block = nz + (r * params.dstNzNStride + k * params.dstNzC0Stride) * c0;
        const uint64_t filled = k + 1 < blocks || params.dValue % c0 == 0 ? c0 : params.dValue % c0;
        std::memcpy(block, row + k * c0, filled * sizeof(T));
        std::memset(static_cast<void*>(block + filled), 0, (c0 - filled) * sizeof(T));
      }
    }
  }
}

}  // namespace AscendC

#endif  // PYPTO_SIM_ASCENDC_CUBE_DATA_COPY_H_
