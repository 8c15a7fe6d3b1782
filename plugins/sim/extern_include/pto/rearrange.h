// Moving elements between tiles: TMOV (a whole valid region, across buffers: Mat to Left/Right, Acc to
// Vec or Mat, converting the element type, rounding to nearest even), TEXTRACT (the window of src at
// (indexRow, indexCol) that dst's valid region covers), TINSERT (src's valid region into dst at
// (indexRow, indexCol)), TCONCAT (src0's valid columns then src1's, row by row) and TTRANS.
#ifndef PYPTO_SIM_PTO_REARRANGE_H_
#define PYPTO_SIM_PTO_REARRANGE_H_

#include <cstdint>

#include "pto/elementwise.h"

namespace pto {

template <typename Dst, typename Src>
inline std::enable_if_t<is_tile_v<Src>> TMOV(Dst& dst, Src& src, sim::Where where = sim::Where::Here()) {
  sim::CheckAssigned(where, "TMOV", dst, src);
  if (dst.GetValidRow() > src.GetValidRow() || dst.GetValidCol() > src.GetValidCol())
    sim::Fail(where, "TMOV", "the destination's valid region %ux%u is larger than the source's %ux%u",
              dst.GetValidRow(), dst.GetValidCol(), src.GetValidRow(), src.GetValidCol());
  sim::ForValid(dst, [&](int64_t r, int64_t c) { return sim::Load(src.At(r, c)); });
}

template <typename Dst, typename Src>
inline void TEXTRACT(Dst& dst, Src& src, uint16_t indexRow = 0, uint16_t indexCol = 0,
                     sim::Where where = sim::Where::Here()) {
  sim::CheckAssigned(where, "TEXTRACT", dst, src);
  if (indexRow + dst.GetValidRow() > static_cast<unsigned>(Src::Rows) ||
      indexCol + dst.GetValidCol() > static_cast<unsigned>(Src::Cols))
    sim::Fail(where, "TEXTRACT", "a %ux%u window at (%u, %u) leaves the %dx%d source tile", dst.GetValidRow(),
              dst.GetValidCol(), indexRow, indexCol, Src::Rows, Src::Cols);
  sim::ForValid(dst, [&](int64_t r, int64_t c) { return sim::Load(src.At(indexRow + r, indexCol + c)); });
}

template <typename Dst, typename Src>
inline void TINSERT(Dst& dst, Src& src, uint16_t indexRow = 0, uint16_t indexCol = 0,
                    sim::Where where = sim::Where::Here()) {
  sim::CheckAssigned(where, "TINSERT", dst, src);
  const int64_t rows = src.GetValidRow(), cols = src.GetValidCol();
  if (indexRow + rows > Dst::Rows || indexCol + cols > Dst::Cols)
    sim::Fail(where, "TINSERT", "a %lldx%lld tile at (%u, %u) leaves the %dx%d destination tile",
              static_cast<long long>(rows), static_cast<long long>(cols), indexRow, indexCol, Dst::Rows, Dst::Cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      dst.At(indexRow + r, indexCol + c) = sim::Convert<typename Dst::DType>(sim::Load(src.At(r, c)));
}

template <typename Dst, typename Src0, typename Src1>
inline void TCONCAT(Dst& dst, Src0& src0, Src1& src1, sim::Where where = sim::Where::Here()) {
  sim::CheckAssigned(where, "TCONCAT", dst, src0, src1);
  const int64_t rows = src0.GetValidRow(), left = src0.GetValidCol(), right = src1.GetValidCol();
  if (left + right > Dst::Cols || rows > Dst::Rows)
    sim::Fail(where, "TCONCAT", "%lld + %lld columns over %lld rows do not fit the %dx%d destination",
              static_cast<long long>(left), static_cast<long long>(right), static_cast<long long>(rows), Dst::Rows,
              Dst::Cols);
  using T = typename Dst::DType;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < left; ++c) dst.At(r, c) = sim::Convert<T>(sim::Load(src0.At(r, c)));
    for (int64_t c = 0; c < right; ++c) dst.At(r, left + c) = sim::Convert<T>(sim::Load(src1.At(r, c)));
  }
}

template <typename Dst, typename Src, typename Tmp>
inline void TTRANS(Dst& dst, Src& src, Tmp&, sim::Where where = sim::Where::Here()) {
  sim::CheckAssigned(where, "TTRANS", dst, src);
  if (src.GetValidRow() > static_cast<unsigned>(Dst::Cols) || src.GetValidCol() > static_cast<unsigned>(Dst::Rows))
    sim::Fail(where, "TTRANS", "the transpose of a %ux%u region does not fit the %dx%d destination",
              src.GetValidRow(), src.GetValidCol(), Dst::Rows, Dst::Cols);
  for (int64_t r = 0; r < src.GetValidRow(); ++r)
    for (int64_t c = 0; c < src.GetValidCol(); ++c)
      dst.At(c, r) = sim::Convert<typename Dst::DType>(sim::Load(src.At(r, c)));
}

}  // namespace pto

#endif  // PYPTO_SIM_PTO_REARRANGE_H_
