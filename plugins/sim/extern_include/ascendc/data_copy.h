// DataCopy and DataCopyPad: the MTE moves between GM and UB and within UB. Strides and lengths are in
// the units AscendC documents: DataCopyParams counts 32-byte blocks for both sides; DataCopyExtParams
// (DataCopyPad) counts bytes on the GM side and 32-byte blocks on the UB side, where every row starts
// 32-byte aligned. A copy to GM honours SetAtomicAdd/Max/Min.
#ifndef PYPTO_SIM_ASCENDC_DATA_COPY_H_
#define PYPTO_SIM_ASCENDC_DATA_COPY_H_

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "ascendc/core_context.h"
#include "ascendc/global_tensor.h"
#include "ascendc/local_tensor.h"
#include "ascendc/pipe_order.h"

namespace AscendC {

struct DataCopyParams {
  uint16_t blockCount = 1;
  uint16_t blockLen = 0;   // 32-byte blocks per row
  uint16_t srcStride = 0;  // 32-byte blocks skipped between rows
  uint16_t dstStride = 0;
  DataCopyParams() = default;
  DataCopyParams(uint16_t count, uint16_t len, uint16_t src_stride, uint16_t dst_stride)
      : blockCount(count), blockLen(len), srcStride(src_stride), dstStride(dst_stride) {}
};

struct DataCopyExtParams {
  uint16_t blockCount = 1;
  uint32_t blockLen = 0;   // bytes per row
  uint32_t srcStride = 0;  // between rows: bytes on GM, 32-byte blocks on UB
  uint32_t dstStride = 0;
  uint32_t rsv = 0;
  DataCopyExtParams() = default;
  DataCopyExtParams(uint16_t count, uint32_t len, uint32_t src_stride, uint32_t dst_stride, uint32_t reserved = 0)
      : blockCount(count), blockLen(len), srcStride(src_stride), dstStride(dst_stride), rsv(reserved) {}
};

// What fills a UB row around the copied bytes (GM to UB only): leftPadding / rightPadding elements.
template <typename T>
struct DataCopyPadExtParams {
  bool isPad = false;
  uint8_t leftPadding = 0;
  uint8_t rightPadding = 0;
  T paddingValue = 0;
  DataCopyPadExtParams() = default;
  DataCopyPadExtParams(bool pad, uint8_t left, uint8_t right, T value)
      : isPad(pad), leftPadding(left), rightPadding(right), paddingValue(value) {}
};

struct DataCopyPadParams {
  bool isPad = false;
  uint8_t leftPadding = 0;
  uint8_t rightPadding = 0;
  uint64_t paddingValue = 0;
  DataCopyPadParams() = default;
  DataCopyPadParams(bool pad, uint8_t left, uint8_t right, uint64_t value)
      : isPad(pad), leftPadding(left), rightPadding(right), paddingValue(value) {}
};

enum class AtomicDtype : uint8_t { NONE };

template <typename T>
inline void SetAtomicAdd() { detail::t_registers.atomic = 1; }
template <typename T>
inline void SetAtomicMax() { detail::t_registers.atomic = 2; }
template <typename T>
inline void SetAtomicMin() { detail::t_registers.atomic = 3; }
inline void SetAtomicNone() { detail::t_registers.atomic = 0; }

namespace detail {

inline constexpr uint32_t kBlockBytes = 32;

inline uint64_t RoundUpToBlock(uint64_t bytes) { return (bytes + kBlockBytes - 1) / kBlockBytes * kBlockBytes; }

// Writes `count` elements to GM, combining with what is there when an atomic mode is set.
template <typename T>
inline void StoreToGm(T* dst, const T* src, uint64_t count) {
  switch (t_registers.atomic) {
    case 0: std::memcpy(dst, src, count * sizeof(T)); return;
    case 1:
      for (uint64_t i = 0; i < count; ++i) dst[i] = Narrow<T>(Widen(dst[i]) + Widen(src[i]));
      return;
    case 2:
      for (uint64_t i = 0; i < count; ++i) dst[i] = Widen(src[i]) > Widen(dst[i]) ? src[i] : dst[i];
      return;
    default:
      for (uint64_t i = 0; i < count; ++i) dst[i] = Widen(src[i]) < Widen(dst[i]) ? src[i] : dst[i];
  }
}

// `rows` rows of `row_bytes`, the source advancing `src_pitch` and the destination `dst_pitch` bytes.
template <typename T>
inline void CopyRows(T* dst, const T* src, uint64_t rows, uint64_t row_bytes, uint64_t src_pitch, uint64_t dst_pitch,
                     bool to_gm) {
  auto* d = reinterpret_cast<unsigned char*>(dst);
  const auto* s = reinterpret_cast<const unsigned char*>(src);
  for (uint64_t r = 0; r < rows; ++r) {
    if (to_gm)
      StoreToGm(reinterpret_cast<T*>(d + r * dst_pitch), reinterpret_cast<const T*>(s + r * src_pitch),
                row_bytes / sizeof(T));
    else
      std::memmove(d + r * dst_pitch, s + r * src_pitch, row_bytes);
  }
}

// The bytes `rows` rows of `row` bytes, `pitch` apart, span from the first.
inline uint64_t RowsSpan(uint64_t rows, uint64_t row, uint64_t pitch) { return rows == 0 ? 0 : (rows - 1) * pitch + row; }

template <typename T>
inline void CopyBlocks(T* dst, const T* src, const DataCopyParams& p, bool to_gm) {
  const uint64_t row = uint64_t{p.blockLen} * kBlockBytes;
  CopyRows(dst, src, p.blockCount, row,
           row + uint64_t{p.srcStride} * kBlockBytes, row + uint64_t{p.dstStride} * kBlockBytes, to_gm);
}

}  // namespace detail

// Count form: `count` consecutive elements.
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t count, detail::SourceLine where = detail::SourceLine::Here()) {
  detail::PipeWrote(detail::Pipe::MTE2, "DataCopy", dst.GetPhyAddr(), uint64_t{count} * sizeof(T), where);
  std::memcpy(dst.GetPhyAddr(), src.GetPhyAddr(), uint64_t{count} * sizeof(T));
}
template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count, detail::SourceLine where = detail::SourceLine::Here()) {
  detail::PipeReads(detail::Pipe::MTE3, "DataCopy", src.GetPhyAddr(), uint64_t{count} * sizeof(T), where);
  detail::StoreToGm(dst.GetPhyAddr(), src.GetPhyAddr(), count);
}
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count, detail::SourceLine where = detail::SourceLine::Here()) {
  detail::PipeReads(detail::Pipe::V, "DataCopy", src.GetPhyAddr(), uint64_t{count} * sizeof(T), where);
  detail::PipeWrote(detail::Pipe::V, "DataCopy", dst.GetPhyAddr(), uint64_t{count} * sizeof(T), where);
  std::memmove(dst.GetPhyAddr(), src.GetPhyAddr(), uint64_t{count} * sizeof(T));
}

// Block form: DataCopyParams in 32-byte blocks.
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& params, detail::SourceLine where = detail::SourceLine::Here()) {
  const uint64_t row = uint64_t{params.blockLen} * detail::kBlockBytes;
  detail::PipeWrote(detail::Pipe::MTE2, "DataCopy", dst.GetPhyAddr(),
                    detail::RowsSpan(params.blockCount, row, row + uint64_t{params.dstStride} * detail::kBlockBytes),
                    where);
  detail::CopyBlocks(dst.GetPhyAddr(), src.GetPhyAddr(), params, false);
}
template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& params, detail::SourceLine where = detail::SourceLine::Here()) {
  const uint64_t row = uint64_t{params.blockLen} * detail::kBlockBytes;
  detail::PipeReads(detail::Pipe::MTE3, "DataCopy", src.GetPhyAddr(),
                    detail::RowsSpan(params.blockCount, row, row + uint64_t{params.srcStride} * detail::kBlockBytes),
                    where);
  detail::CopyBlocks(dst.GetPhyAddr(), src.GetPhyAddr(), params, true);
}
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& params, detail::SourceLine where = detail::SourceLine::Here()) {
  const uint64_t row = uint64_t{params.blockLen} * detail::kBlockBytes;
  detail::PipeReads(detail::Pipe::V, "DataCopy", src.GetPhyAddr(),
                    detail::RowsSpan(params.blockCount, row, row + uint64_t{params.srcStride} * detail::kBlockBytes),
                    where);
  detail::PipeWrote(detail::Pipe::V, "DataCopy", dst.GetPhyAddr(),
                    detail::RowsSpan(params.blockCount, row, row + uint64_t{params.dstStride} * detail::kBlockBytes),
                    where);
  detail::CopyBlocks(dst.GetPhyAddr(), src.GetPhyAddr(), params, false);
}

// DataCopyPad GM -> UB: rows of blockLen bytes, GM rows srcStride bytes apart; each UB row holds
// leftPadding elements, the data, rightPadding elements, rounded up to 32 bytes, then dstStride blocks.
template <typename T, typename Params>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const Params& params,
                        const DataCopyPadExtParams<T>& pad, detail::SourceLine where = detail::SourceLine::Here()) {
  const uint64_t row = params.blockLen;
  const uint64_t ub_row = detail::RoundUpToBlock((pad.leftPadding + pad.rightPadding) * sizeof(T) + row);
  const uint64_t ub_pitch = ub_row + uint64_t{params.dstStride} * detail::kBlockBytes;
  detail::PipeWrote(detail::Pipe::MTE2, "DataCopyPad", dst.GetPhyAddr(),
                    detail::RowsSpan(params.blockCount, ub_row, ub_pitch), where);
  auto* ub = reinterpret_cast<unsigned char*>(dst.GetPhyAddr());
  const auto* gm = reinterpret_cast<const unsigned char*>(src.GetPhyAddr());
  for (uint64_t r = 0; r < params.blockCount; ++r) {
    T* out = reinterpret_cast<T*>(ub + r * ub_pitch);
    std::memcpy(out + pad.leftPadding, gm + r * (row + params.srcStride), row);
    if (!pad.isPad) continue;
    std::fill(out, out + pad.leftPadding, pad.paddingValue);
    T* right = out + pad.leftPadding + row / sizeof(T);
    std::fill(right, right + pad.rightPadding, pad.paddingValue);
  }
}
template <typename T, typename Params>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const Params& params,
                        const DataCopyPadParams& pad, detail::SourceLine where = detail::SourceLine::Here()) {
  T value;
  std::memcpy(&value, &pad.paddingValue, sizeof(T));
  DataCopyPad(dst, src, params, DataCopyPadExtParams<T>(pad.isPad, pad.leftPadding, pad.rightPadding, value), where);
}

// DataCopyPad UB -> GM: UB rows start 32-byte aligned and srcStride blocks apart; GM rows are
// blockLen bytes, dstStride bytes apart.
template <typename T, typename Params>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const Params& params, detail::SourceLine where = detail::SourceLine::Here()) {
  const uint64_t row = params.blockLen;
  const uint64_t ub_pitch = detail::RoundUpToBlock(row) + uint64_t{params.srcStride} * detail::kBlockBytes;
  detail::PipeReads(detail::Pipe::MTE3, "DataCopyPad", src.GetPhyAddr(), detail::RowsSpan(params.blockCount, row, ub_pitch),
                    where);
  detail::CopyRows(dst.GetPhyAddr(), src.GetPhyAddr(), params.blockCount, row, ub_pitch, row + params.dstStride, true);
}

// DataCopyPad UB -> UB (both sides in 32-byte blocks, rows of blockLen bytes).
template <typename T, typename Params>
inline void DataCopyPad(const LocalTensor<T>& dst, const LocalTensor<T>& src, const Params& params, detail::SourceLine where = detail::SourceLine::Here()) {
  const uint64_t row = params.blockLen;
  const uint64_t pitch = detail::RoundUpToBlock(row);
  detail::PipeReads(detail::Pipe::V, "DataCopyPad", src.GetPhyAddr(),
                    detail::RowsSpan(params.blockCount, row, pitch + uint64_t{params.srcStride} * detail::kBlockBytes), where);
  detail::PipeWrote(detail::Pipe::V, "DataCopyPad", dst.GetPhyAddr(),
                    detail::RowsSpan(params.blockCount, row, pitch + uint64_t{params.dstStride} * detail::kBlockBytes), where);
  detail::CopyRows(dst.GetPhyAddr(), src.GetPhyAddr(), params.blockCount, row,
                   pitch + uint64_t{params.srcStride} * detail::kBlockBytes,
                   pitch + uint64_t{params.dstStride} * detail::kBlockBytes, false);
}

}  // namespace AscendC

#endif  // PYPTO_SIM_ASCENDC_DATA_COPY_H_
