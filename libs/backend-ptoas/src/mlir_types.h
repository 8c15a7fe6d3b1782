// Spellings of PyPTO types in the PTO MLIR dialect.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "pypto/ir/type.h"
#include "pypto/support/expected.h"

namespace pypto::backend_ptoas {

// The MLIR element type ("f32", "i1", "ui8", "index", ...); an error for types ptoas has no spelling
// for here (packed 4-bit types, FP64, task ids).
pypto::expected<std::string, std::string> MlirElementType(ir::DataType dtype);

// The address-space keyword of a tile buffer ("vec", "mat", ...).
std::string_view TileLoc(ir::MemorySpace space);

// `!pto.tensor_view<?x?xf32>`: a view of a global tensor; its extents are given as operands.
std::string TensorViewType(size_t rank, std::string_view element);

// `!pto.partition_tensor_view<32x64xf32>`: the statically shaped window a load or store moves.
std::string PartitionViewType(const ir::Shape& dims, std::string_view element);

// ptoas tiles are two-dimensional; a 1-D tile of n elements is one row of n.
struct TileExtent {
  int64_t rows = 0;
  int64_t cols = 0;
};
TileExtent TileRowsCols(const ir::TileType& tile);

// `!pto.tile_buf<loc=vec, dtype=f32, rows=R, cols=C, v_row=?, v_col=?, blayout=row_major,
// slayout=none_box, fractal=512, pad=0>`. The valid extent is dynamic in the type and given by
// alloc_tile's operands; the layout fields are ptoas's defaults for a row-major Vec tile.
std::string TileBufType(const ir::TileType& tile, std::string_view element);

}  // namespace pypto::backend_ptoas
