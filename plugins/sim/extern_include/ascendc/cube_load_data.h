// LoadData: the MTE1 moves from L1 to L0A/L0B (cube_layout.h has the layouts).
//   LoadData2DParams: repeatTimes fractals of 512 bytes, the r-th read from fractal
//     startIndex + r * srcStride of the source and written (dstGap + 1) * r fractals into the
//     destination; with ifTranspose (16-bit types) each 16 x 16 fractal is transposed on the way.
//   LoadData2dTransposeParams (LoadDataWithTranspose): as above for 16-bit types; for 32-bit types a
//     repeat takes a 16 x 16 square held by two consecutive 16 x 8 fractals (srcStride counts squares)
//     and writes its transpose as two 16 x 8 fractals, the second (dstFracGap + 1) fractals after the
//     first; for 8-bit types a 32 x 32 square of two 16 x 32 fractals, likewise.
//   LoadData3DParamsV2 with SetFmatrix (img2col): the feature map in L1 is NC1HWC0 (for a 1 x 1 filter,
//     exactly a matrix in NZ order whose rows are the H x W positions); mExtension positions from
//     mStartPt by kExtension channels from kStartPt are written to L0A in zZ order. Only the 1 x 1,
//     stride 1, unpadded form the attention kernels use is modelled; anything else fails the run.
#ifndef PYPTO_SIM_ASCENDC_CUBE_LOAD_DATA_H_
#define PYPTO_SIM_ASCENDC_CUBE_LOAD_DATA_H_

#include <cstdint>
#include <cstring>
#include <string>

#include "ascendc/core_context.h"
#include "ascendc/cube_layout.h"
#include "ascendc/local_tensor.h"

namespace AscendC {

struct LoadData2DParams {
  uint16_t startIndex = 0;
  uint8_t repeatTimes = 0;
  uint16_t srcStride = 0;
  uint8_t sid = 0;
  uint16_t dstGap = 0;
  bool ifTranspose = false;
  uint8_t addrMode = 0;
  LoadData2DParams() = default;
  LoadData2DParams(uint16_t start, uint8_t repeat, uint16_t src_stride, uint8_t sid_, uint16_t dst_gap, bool transpose,
                   uint8_t addr_mode)
      : startIndex(start), repeatTimes(repeat), srcStride(src_stride), sid(sid_), dstGap(dst_gap),
        ifTranspose(transpose), addrMode(addr_mode) {}
};

struct LoadData2dTransposeParams {
  uint16_t startIndex = 0;
  uint8_t repeatTimes = 0;
  uint16_t srcStride = 0;
  uint16_t dstGap = 0;
  uint16_t dstFracGap = 0;
  uint8_t addrMode = 0;
  LoadData2dTransposeParams() = default;
  LoadData2dTransposeParams(uint16_t start, uint8_t repeat, uint16_t src_stride, uint16_t dst_gap, uint16_t frac_gap,
                            uint8_t addr_mode = 0)
      : startIndex(start), repeatTimes(repeat), srcStride(src_stride), dstGap(dst_gap), dstFracGap(frac_gap),
        addrMode(addr_mode) {}
};

enum class FmatrixMode : uint8_t { FMATRIX_LEFT = 0, FMATRIX_RIGHT = 1 };

struct IsResetLoad3dConfig {
  bool isSetFMatrix = true;
  bool isSetPadding = true;
};
inline constexpr IsResetLoad3dConfig IS_RESER_LOAD3D_DEFAULT_CONFIG = {true, true};

template <typename T>
struct LoadData3DParamsV2 {
  uint8_t padList[4] = {0, 0, 0, 0};
  uint16_t l1H = 0;
  uint16_t l1W = 0;
  uint16_t channelSize = 0;
  uint16_t kExtension = 0;
  uint16_t mExtension = 0;
  uint16_t kStartPt = 0;
  uint16_t mStartPt = 0;
  uint8_t strideW = 1;
  uint8_t strideH = 1;
  uint8_t filterW = 1;
  uint8_t filterH = 1;
  uint8_t dilationFilterW = 1;
  uint8_t dilationFilterH = 1;
  bool enTranspose = false;
  bool enSmallK = false;
  T padValue = 0;
  bool filterSizeW = false;
  bool filterSizeH = false;
  bool fMatrixCtrl = false;
};

namespace detail {

// The feature-map registers SetFmatrix writes, one set per FmatrixMode.
struct Fmatrix {
  uint16_t l1H = 0, l1W = 0;
  uint8_t pad[4] = {0, 0, 0, 0};
};
inline thread_local Fmatrix t_fmatrix[2];

// One 512-byte fractal of `rows` x `cols` elements, transposed into a `cols` x `rows` one.
template <typename T>
inline void TransposeFractal(T* dst, const T* src, uint32_t rows, uint32_t cols, uint32_t dst_pitch,
                             uint32_t src_pitch) {
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t c = 0; c < cols; ++c) dst[c * dst_pitch + r] = src[r * src_pitch + c];
}

}  // namespace detail

template <typename T>
inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2DParams& params,
                     detail::SourceLine where = detail::SourceLine::Here()) {
  constexpr uint32_t fractal = detail::kFractalBytes / sizeof(T);
  if (params.ifTranspose && sizeof(T) != 2)
    detail::Fail("LoadData: ifTranspose transposes 16-bit fractals only; for " + std::to_string(8 * sizeof(T)) +
                     "-bit elements use LoadDataWithTranspose",
                 where);
  for (uint32_t r = 0; r < params.repeatTimes; ++r) {
    const T* from = src.GetPhyAddr() + (uint64_t{params.startIndex} + uint64_t{r} * params.srcStride) * fractal;
    T* to = dst.GetPhyAddr() + uint64_t{r} * (params.dstGap + 1u) * fractal;
    if (params.ifTranspose)
      detail::TransposeFractal(to, from, 16, 16, 16, 16);
    else
      std::memmove(to, from, detail::kFractalBytes);
  }
}

template <typename T>
inline void LoadDataWithTranspose(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                  const LoadData2dTransposeParams& params) {
  constexpr uint32_t fractal = detail::kFractalBytes / sizeof(T);
  constexpr uint32_t c0 = detail::kC0<T>;
  for (uint32_t r = 0; r < params.repeatTimes; ++r) {
    if constexpr (sizeof(T) == 2) {
      const T* from = src.GetPhyAddr() + (uint64_t{params.startIndex} + uint64_t{r} * params.srcStride) * fractal;
      T* to = dst.GetPhyAddr() + uint64_t{r} * (params.dstGap + 1u) * fractal;
      detail::TransposeFractal(to, from, 16, 16, 16, 16);
    } else {
      // A square of side `side` = 2 x min(16, C0) held as two fractals side by side (left: its first
      // half of columns); its transpose is written as two fractals of the same shape.
      constexpr uint32_t rows = sizeof(T) == 1 ? 32 : 16;  // the square's side
      constexpr uint32_t half = rows / 2;
      const T* from = src.GetPhyAddr() + (uint64_t{params.startIndex} + uint64_t{r} * params.srcStride) * 2 * fractal;
      T* to = dst.GetPhyAddr() + uint64_t{r} * (params.dstGap + 1u) * fractal;
      T* second = to + uint64_t{params.dstFracGap + 1u} * fractal;
      // Source element (i, j) of the square: fractal j / half, at ((i % 16) ... ) of rows of `c0`.
      for (uint32_t i = 0; i < rows; ++i)
        for (uint32_t j = 0; j < rows; ++j) {
          const T value = sizeof(T) == 1 ? from[(i / 16) * fractal + (i % 16) * c0 + j]
                                         : from[(j / half) * fractal + i * c0 + j % half];
          // Transposed element (j, i): for 32-bit, fractal i / half of rows j; for 8-bit, fractal j / 16.
          if constexpr (sizeof(T) == 1)
            (j / 16 ? second : to)[(j % 16) * c0 + i] = value;
          else
            (i / half ? second : to)[j * c0 + i % half] = value;
        }
    }
  }
}

inline void SetFmatrix(uint16_t l1H, uint16_t l1W, const uint8_t padList[4], const FmatrixMode& mode) {
  detail::Fmatrix& fm = detail::t_fmatrix[static_cast<int>(mode)];
  fm.l1H = l1H;
  fm.l1W = l1W;
  for (int i = 0; i < 4; ++i) fm.pad[i] = padList[i];
}
inline void SetLoadDataPaddingValue(...) {}
template <typename T>
inline void SetLoadDataRepeat(...) {}
inline void SetLoadDataBoundary(uint32_t) {}

template <typename T, const IsResetLoad3dConfig& config = IS_RESER_LOAD3D_DEFAULT_CONFIG>
inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData3DParamsV2<T>& params,
                     detail::SourceLine where = detail::SourceLine::Here()) {
  constexpr uint32_t c0 = detail::kC0<T>;
  const detail::Fmatrix& fm = detail::t_fmatrix[params.fMatrixCtrl ? 1 : 0];
  const uint32_t height = config.isSetFMatrix ? params.l1H : fm.l1H;
  const uint32_t width = config.isSetFMatrix ? params.l1W : fm.l1W;
  const uint8_t* pad = config.isSetPadding ? params.padList : fm.pad;
  if (params.filterW != 1 || params.filterH != 1 || params.strideW != 1 || params.strideH != 1 ||
      params.dilationFilterW != 1 || params.dilationFilterH != 1 || pad[0] || pad[1] || pad[2] || pad[3] ||
      params.enTranspose)
    detail::Fail("LoadData (LoadData3DParamsV2): the simulator models img2col with a 1 x 1 filter, stride 1, no "
                 "dilation, no padding and no transpose only",
                 where);
  if (dst.GetPosition() == TPosition::B2)
    detail::Fail("LoadData (LoadData3DParamsV2): img2col into L0B (B2) is not modelled by the simulator; load L0B "
                 "with LoadData2DParams or LoadDataWithTranspose",
                 where);
  const uint64_t positions = uint64_t{height} * width;
  const uint64_t k_blocks = detail::CeilDiv(params.kExtension, c0);
  for (uint64_t m = 0; m < params.mExtension; ++m)
    for (uint64_t k = 0; k < params.kExtension; ++k) {
      const uint64_t pos = m + params.mStartPt, ch = k + params.kStartPt;
      const T value = pos < positions && ch < params.channelSize ? src.GetPhyAddr()[(ch / c0) * positions * c0 + pos * c0 + ch % c0]
                                                                 : T(0);
      dst.GetPhyAddr()[detail::L0aOffset<T>(m, k, k_blocks)] = value;
    }
}

}  // namespace AscendC

#endif  // PYPTO_SIM_ASCENDC_CUBE_LOAD_DATA_H_
