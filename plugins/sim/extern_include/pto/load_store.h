// Moving tiles between global memory and the core: TLOAD, TSTORE and TFILLPAD.
//
// TLOAD copies the destination tile's valid region from the GlobalTensor's 2-D view (rows over the
// first four dimensions, columns over the last; strides in elements, so ND and DN views both work) and,
// when the tile declares a PadValue, fills the rest of the tile with it. TSTORE copies the source
// tile's valid region back, converting an accumulator's elements to the tensor's type (rounding to
// nearest even) as the fixpipe does. NZ global tensors are refused.
#ifndef PYPTO_SIM_PTO_LOAD_STORE_H_
#define PYPTO_SIM_PTO_LOAD_STORE_H_

#include <cstdint>
#include <cstring>
#include <limits>

#include "pto/check.h"
#include "pto/convert.h"
#include "pto/tile.h"

namespace pto {
namespace sim {

// The element a PadValue stands for: 0, the lowest value (-inf for floats), the highest, or custom bits.
template <typename T>
T PadElement(PadValue pad) {
  if (pad == PadValue::Zero || pad == PadValue::Null) return T(0);
  if (pad == PadValue::Min) {
    if constexpr (std::is_integral_v<T>) return std::numeric_limits<T>::lowest();
    else return T(-std::numeric_limits<float>::infinity());
  }
  if (pad == PadValue::Max) {
    if constexpr (std::is_integral_v<T>) return std::numeric_limits<T>::max();
    else return T(std::numeric_limits<float>::infinity());
  }
  const uint32_t bits = static_cast<uint32_t>(static_cast<uint64_t>(pad) & 0xffffffffu);
  T value{};
  std::memcpy(&value, &bits, sizeof(T) < sizeof(bits) ? sizeof(T) : sizeof(bits));
  return value;
}

// Everything of `tile` outside its valid region set to `value`.
template <typename TileT>
void FillOutsideValid(TileT& tile, typename TileT::DType value) {
  const int64_t rows = tile.GetValidRow(), cols = tile.GetValidCol();
  for (int64_t r = 0; r < TileT::Rows; ++r)
    for (int64_t c = (r < rows ? cols : 0); c < TileT::Cols; ++c) tile.At(r, c) = value;
}

template <typename TileT, typename GlobalT>
void CheckTransfer(const TileT& tile, const GlobalT& global, const Where& where, const char* op) {
  tile.CheckAssigned(where, op);
  if (GlobalT::layout == Layout::NZ)
    Fail(where, op, "NZ global tensors are not implemented on the simulator; use Layout::ND or Layout::DN");
  if (!global.data()) Fail(where, op, "the GlobalTensor has no data pointer");
  if (tile.GetValidRow() > static_cast<unsigned>(TileT::Rows) ||
      tile.GetValidCol() > static_cast<unsigned>(TileT::Cols))
    Fail(where, op, "the tile's valid region %ux%u exceeds the %dx%d tile", tile.GetValidRow(), tile.GetValidCol(),
         TileT::Rows, TileT::Cols);
  if (tile.GetValidRow() > global.Rows() || tile.GetValidCol() > global.Cols())
    Fail(where, op, "the tile's valid region %ux%u is larger than the GlobalTensor's %lldx%lld view",
         tile.GetValidRow(), tile.GetValidCol(), static_cast<long long>(global.Rows()),
         static_cast<long long>(global.Cols()));
}

}  // namespace sim

template <typename TileData, typename GlobalData>
inline void TLOAD(TileData& dst, GlobalData& src, sim::Where where = sim::Where::Here()) {
  sim::CheckTransfer(dst, src, where, "TLOAD");
  using T = typename TileData::DType;
  using G = typename GlobalData::DType;
  const int64_t rows = dst.GetValidRow(), cols = dst.GetValidCol();
  const auto* base = src.data();
  const int64_t col_stride = src.GetStride(4);
  for (int64_t r = 0; r < rows; ++r) {
    const auto* row = base + src.OffsetOf(r, 0);
    for (int64_t c = 0; c < cols; ++c) dst.At(r, c) = sim::Convert<T>(static_cast<G>(row[c * col_stride]));
  }
  if constexpr (TileData::PadVal != PadValue::Null) sim::FillOutsideValid(dst, sim::PadElement<T>(TileData::PadVal));
}

template <typename GlobalData, typename TileData>
inline void TSTORE(GlobalData& dst, TileData& src, sim::Where where = sim::Where::Here()) {
  sim::CheckTransfer(src, dst, where, "TSTORE");
  using G = typename GlobalData::DType;
  const int64_t rows = src.GetValidRow(), cols = src.GetValidCol();
  auto* base = dst.data();
  const int64_t col_stride = dst.GetStride(4);
  for (int64_t r = 0; r < rows; ++r) {
    auto* row = base + dst.OffsetOf(r, 0);
    for (int64_t c = 0; c < cols; ++c) row[c * col_stride] = sim::Convert<G>(src.At(r, c));
  }
}

// dst = src's valid region, the rest of dst filled with dst's PadValue (zero when it declares none).
template <typename DstTile, typename SrcTile>
inline void TFILLPAD(DstTile& dst, SrcTile& src, sim::Where where = sim::Where::Here()) {
  dst.CheckAssigned(where, "TFILLPAD");
  src.CheckAssigned(where, "TFILLPAD");
  const int64_t rows = src.GetValidRow(), cols = src.GetValidCol();
  if (rows > DstTile::Rows || cols > DstTile::Cols)
    sim::Fail(where, "TFILLPAD", "the source's valid region %lldx%lld does not fit the %dx%d destination",
              static_cast<long long>(rows), static_cast<long long>(cols), DstTile::Rows, DstTile::Cols);
  using T = typename DstTile::DType;
  if (dst.data() != reinterpret_cast<T*>(src.data()))
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) dst.At(r, c) = sim::Convert<T>(src.At(r, c));
  const T pad = sim::PadElement<T>(DstTile::PadVal);
  for (int64_t r = 0; r < DstTile::Rows; ++r)
    for (int64_t c = (r < rows ? cols : 0); c < DstTile::Cols; ++c) dst.At(r, c) = pad;
}

}  // namespace pto

#endif  // PYPTO_SIM_PTO_LOAD_STORE_H_
