// pto-isa's Tile: a Rows x Cols array of DType in one of the core's local buffers, placed there by
// TASSIGN, with a valid region (ValidRow x ValidCol, each a template constant or DYNAMIC and then set
// at construction or with SetValidRow/SetValidCol/SetValidShape) that the operations work on.
//
// On the simulator every tile is dense in its BLayout: element (r, c) is at r * Cols + c (RowMajor) or
// c * Rows + r (ColMajor). The SLayout fractal boxing of Mat/Left/Right/Acc tiles is not modelled:
// the operations that fill and read those tiles (TLOAD, TMOV, TEXTRACT, TMATMUL, TSTORE) agree on this
// layout, so the numbers are right unless a kernel reinterprets a boxed tile's bytes as another layout.
#ifndef PYPTO_SIM_PTO_TILE_H_
#define PYPTO_SIM_PTO_TILE_H_

#include <cstdint>
#include <type_traits>

#include "pto/check.h"
#include "pto/core_memory.h"
#include "pto/global_tensor.h"
#include "pto/types.h"

namespace pto {

template <TileType Loc_, typename Element_, int Rows_, int Cols_, BLayout BFractal_ = BLayout::RowMajor,
          int RowValid_ = Rows_, int ColValid_ = Cols_, SLayout SFractal_ = SLayout::NoneBox,
          int SFractalSize_ = TileConfig::fractalABSize, auto PadVal_ = PadValue::Null,
          CompactMode Compact_ = CompactMode::Null>
struct Tile {
  using DType = Element_;
  static constexpr TileType Loc = Loc_;
  static constexpr int Rows = Rows_;
  static constexpr int Cols = Cols_;
  static constexpr int ValidRow = RowValid_;
  static constexpr int ValidCol = ColValid_;
  static constexpr BLayout BFractal = BFractal_;
  static constexpr SLayout SFractal = SFractal_;
  static constexpr int SFractalSize = SFractalSize_;
  static constexpr auto PadVal = PadVal_;
  static constexpr CompactMode Compact = Compact_;
  static constexpr bool isRowMajor = BFractal_ == BLayout::RowMajor;
  static constexpr int RowStride = isRowMajor ? Cols : 1;
  static constexpr int ColStride = isRowMajor ? 1 : Rows;
  static constexpr int Numel = Rows * Cols;
  static_assert(Rows > 0 && Cols > 0, "a tile has at least one row and one column");
  static_assert((ValidRow == DYNAMIC || (ValidRow >= 0 && ValidRow <= Rows)) &&
                    (ValidCol == DYNAMIC || (ValidCol >= 0 && ValidCol <= Cols)),
                "a tile's valid region lies inside it");

  Tile() = default;
  template <int R = ValidRow, int C = ValidCol, typename = std::enable_if_t<R == DYNAMIC && C == DYNAMIC>>
  Tile(unsigned valid_rows, unsigned valid_cols) : valid_rows_(valid_rows), valid_cols_(valid_cols) {}
  template <int R = ValidRow, int C = ValidCol, typename = std::enable_if_t<(R == DYNAMIC) != (C == DYNAMIC)>>
  explicit Tile(unsigned valid) : valid_rows_(R == DYNAMIC ? valid : Rows), valid_cols_(C == DYNAMIC ? valid : Cols) {}

  unsigned GetValidRow() const { return ValidRow == DYNAMIC ? valid_rows_ : static_cast<unsigned>(ValidRow); }
  unsigned GetValidCol() const { return ValidCol == DYNAMIC ? valid_cols_ : static_cast<unsigned>(ValidCol); }
  void SetValidRow(unsigned rows) {
    static_assert(ValidRow == DYNAMIC, "only a DYNAMIC valid row count can be set");
    valid_rows_ = rows;
  }
  void SetValidCol(unsigned cols) {
    static_assert(ValidCol == DYNAMIC, "only a DYNAMIC valid column count can be set");
    valid_cols_ = cols;
  }
  void SetValidShape(unsigned rows, unsigned cols) {
    static_assert(ValidRow == DYNAMIC && ValidCol == DYNAMIC, "only a DYNAMIC valid shape can be set");
    valid_rows_ = rows;
    valid_cols_ = cols;
  }

  DType* data() const { return data_; }
  uint64_t address() const { return address_; }
  DType& At(int64_t row, int64_t col) const { return data_[row * RowStride + col * ColStride]; }
  DType GetValue(uint32_t offset) const { return data_[offset]; }
  void SetValue(uint32_t offset, DType value) const { data_[offset] = value; }

  // TASSIGN's work: point the tile at `address` in its buffer.
  void Assign(uint64_t address, const sim::Where& where) {
    const sim::LocalBuffer buffer = sim::BufferOf(Loc);
    if (!buffer.base) sim::Fail(where, "TASSIGN", "this TileType has no buffer on the simulator");
    const uint64_t bytes = static_cast<uint64_t>(Numel) * sizeof(DType);
    if (address > static_cast<uint64_t>(buffer.bytes) || bytes > static_cast<uint64_t>(buffer.bytes) - address)
      sim::Fail(where, "TASSIGN",
                "a %dx%d tile of %zu-byte elements at address %llu ends at byte %llu, past the end of %s "
                "(%lld bytes)",
                Rows, Cols, sizeof(DType), static_cast<unsigned long long>(address),
                static_cast<unsigned long long>(address + bytes), buffer.name, static_cast<long long>(buffer.bytes));
    if (address % alignof(DType) != 0)
      sim::Fail(where, "TASSIGN", "address %llu is not aligned to the %zu-byte element",
                static_cast<unsigned long long>(address), alignof(DType));
    address_ = address;
    data_ = reinterpret_cast<DType*>(buffer.base + address);
  }

  void CheckAssigned(const sim::Where& where, const char* op) const {
    if (!data_) sim::Fail(where, op, "a tile was used before TASSIGN gave it an address");
  }

 private:
  DType* data_ = nullptr;
  uint64_t address_ = 0;
  unsigned valid_rows_ = ValidRow == DYNAMIC ? Rows : ValidRow;
  unsigned valid_cols_ = ValidCol == DYNAMIC ? Cols : ValidCol;
};

template <typename T>
struct is_tile : std::false_type {};
template <TileType L, typename E, int R, int C, BLayout B, int VR, int VC, SLayout S, int F, auto P, CompactMode M>
struct is_tile<Tile<L, E, R, C, B, VR, VC, S, F, P, M>> : std::true_type {};
template <typename T>
constexpr bool is_tile_v = is_tile<std::remove_cv_t<T>>::value;

template <typename T>
struct is_global_tensor : std::false_type {};
template <typename E, typename S, typename St, Layout L>
struct is_global_tensor<GlobalTensor<E, S, St, L>> : std::true_type {};

// The cube's operand tiles, as pto-isa names them.
template <typename Element_, int Rows_, int Cols_, int RowValid_ = Rows_, int ColValid_ = Cols_>
using TileMat = Tile<TileType::Mat, Element_, Rows_, Cols_, BLayout::ColMajor, RowValid_, ColValid_, SLayout::RowMajor>;
template <typename Element_, int Rows_, int Cols_, int RowValid_ = Rows_, int ColValid_ = Cols_>
using TileLeft =
    Tile<TileType::Left, Element_, Rows_, Cols_, BLayout::RowMajor, RowValid_, ColValid_, SLayout::RowMajor>;
template <typename Element_, int Rows_, int Cols_, int RowValid_ = Rows_, int ColValid_ = Cols_>
using TileRight =
    Tile<TileType::Right, Element_, Rows_, Cols_, BLayout::RowMajor, RowValid_, ColValid_, SLayout::ColMajor>;
template <typename Element_, int Rows_, int Cols_, int RowValid_ = Rows_, int ColValid_ = Cols_>
using TileAcc = Tile<TileType::Acc, Element_, Rows_, Cols_, BLayout::ColMajor, RowValid_, ColValid_, SLayout::RowMajor,
                     TileConfig::fractalCSize>;

template <typename T, typename AddrType>
inline std::enable_if_t<is_tile_v<T>> TASSIGN(T& tile, AddrType address, sim::Where where = sim::Where::Here()) {
  tile.Assign(static_cast<uint64_t>(address), where);
}
template <typename T, typename Pointer>
inline std::enable_if_t<is_global_tensor<T>::value> TASSIGN(T& tensor, Pointer data) {
  tensor.SetAddr(data);
}

}  // namespace pto

#endif  // PYPTO_SIM_PTO_TILE_H_
