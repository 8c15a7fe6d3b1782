// Fixpipe: L0C -> GM (or L1) with FixpipeParamsV220. The source is an mSize x nSize matrix in L0C's
// NZ order whose column blocks of 16 are srcStride rows apart (srcStride is the M extent the Mmad
// padded, a multiple of 16). It is converted as quantPre says (F322F16, F322BF16: float to half or
// bfloat16, rounding to nearest even; NoQuant: unchanged), optionally through ReLU, and written
//   CFG_ROW_MAJOR (NZ2ND): row-major, rows dstStride elements apart;
//   CFG_NZ: in NZ order, column blocks of 16 elements dstStride 32-byte blocks apart.
#ifndef PYPTO_SIM_ASCENDC_CUBE_FIXPIPE_H_
#define PYPTO_SIM_ASCENDC_CUBE_FIXPIPE_H_

#include <cstdint>

#include "ascendc/cube_layout.h"
#include "ascendc/global_tensor.h"
#include "ascendc/local_tensor.h"
#include "ascendc/scalar_types.h"

enum QuantMode_t : uint8_t {
  NoQuant = 0,
  F322F16,
  F322BF16,
  DEQF16,
  VDEQF16,
  QF322B8_PRE,
  VQF322B8_PRE,
  REQ8,
  VREQ8,
  DEQS322F16,
  VDEQS322F16,
};

namespace AscendC {

enum class CO2Layout : uint8_t { NZ = 0, ROW_MAJOR, COLUMN_MAJOR };
struct FixpipeConfig {
  CO2Layout format;
};
inline constexpr FixpipeConfig CFG_NZ = {CO2Layout::NZ};
inline constexpr FixpipeConfig CFG_ROW_MAJOR = {CO2Layout::ROW_MAJOR};
inline constexpr FixpipeConfig CFG_COLUMN_MAJOR = {CO2Layout::COLUMN_MAJOR};

struct FixpipeParamsV220 {
  uint16_t nSize = 0;
  uint16_t mSize = 0;
  uint16_t srcStride = 0;
  uint32_t dstStride = 0;
  QuantMode_t quantPre = QuantMode_t::NoQuant;
  uint64_t deqScalar = 0;
  uint16_t ndNum = 1;
  uint16_t srcNdStride = 0;
  uint16_t dstNdStride = 0;
  bool reluEn = false;
  uint8_t unitFlag = 0;
  bool isChannelSplit = false;
  FixpipeParamsV220() = default;
  FixpipeParamsV220(uint16_t n, uint16_t m, uint16_t src_stride, uint32_t dst_stride, bool relu)
      : nSize(n), mSize(m), srcStride(src_stride), dstStride(dst_stride), reluEn(relu) {}
};

namespace detail {

template <typename Dst, typename Src, const FixpipeConfig& config>
inline void FixpipeCopy(Dst* dst, const Src* src, const FixpipeParamsV220& p) {
  for (uint64_t i = 0; i < p.mSize; ++i)
    for (uint64_t j = 0; j < p.nSize; ++j) {
      auto value = src[L0cOffset(i, j, uint64_t{p.srcStride})];
      if (p.reluEn && value < 0) value = 0;
      uint64_t at;
      if constexpr (config.format == CO2Layout::NZ)
        at = (j / kFractalRows) * p.dstStride * (kC0Bytes / sizeof(Dst)) + i * kFractalRows + j % kFractalRows;
      else if constexpr (config.format == CO2Layout::COLUMN_MAJOR)
        at = j * p.dstStride + i;
      else
        at = i * p.dstStride + j;
      dst[at] = static_cast<Dst>(value);
    }
}

}  // namespace detail

template <typename Dst, typename Src, const FixpipeConfig& config = CFG_ROW_MAJOR>
inline void Fixpipe(const GlobalTensor<Dst>& dst, const LocalTensor<Src>& src, const FixpipeParamsV220& params) {
  detail::FixpipeCopy<Dst, Src, config>(dst.GetPhyAddr(), src.GetPhyAddr(), params);
}
template <typename Dst, typename Src, const FixpipeConfig& config = CFG_ROW_MAJOR>
inline void Fixpipe(const LocalTensor<Dst>& dst, const LocalTensor<Src>& src, const FixpipeParamsV220& params) {
  detail::FixpipeCopy<Dst, Src, config>(dst.GetPhyAddr(), src.GetPhyAddr(), params);
}

inline void SetFixPipeConfig(...) {}
inline void SetFixpipeNz2ndFlag(uint16_t, uint16_t, uint16_t) {}
inline void SetFixpipePreQuantFlag(uint64_t) {}

}  // namespace AscendC

#endif  // PYPTO_SIM_ASCENDC_CUBE_FIXPIPE_H_
