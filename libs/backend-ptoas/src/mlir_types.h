// Spellings of PyPTO types in the PTO MLIR dialect.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pypto/ir/type.h"
#include "pypto/support/expected.h"

namespace pypto::backend_ptoas {

// The MLIR element type ("f32", "i1", "ui8", "index", ...); an error for types ptoas has no spelling
// for here (FP64, task ids, the 4-bit types other than FP4).
pypto::expected<std::string, std::string> MlirElementType(ir::DataType dtype);

// The address-space keyword of a tile buffer ("vec", "mat", ...).
std::string_view TileLoc(ir::MemorySpace space);

// `!pto.ptr<f32>`: a kernel argument that points at a global tensor.
std::string PtrType(std::string_view element);

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

// The layout fields of a tile_buf type: block layout, layout inside a block (none_box when the tile
// is not boxed) and the fractal (box) size in bytes.
struct TileLayout {
  std::string_view blayout;
  std::string_view slayout;
  int fractal = 512;
};

// The layout a tile of `extent` has in `space` when nothing asks for another, as upstream PyPTO
// infers it: Vec (and Bias) tiles are plain row-major, except column vectors [N, 1] (N > 1), which
// are column-major; the cube buffers are boxed ("fractal"): Mat and Left col_major/row_major
// (NZ), Right row-major blocks of column-major boxes (ZN), Acc col_major/row_major in 1024-byte boxes.
TileLayout ImplicitTileLayout(ir::MemorySpace space, TileExtent extent);

// The layout of an MX scale tile, in Mat (loaded from a tensor of `layout`) or in its scale buffer:
// MX_A_ZZ's left scales row_major/row_major, MX_B_NN's right ones col_major/col_major, in 32-byte
// boxes (a 16x2 or 2x16 block of E8M0 exponents), as upstream pypto types them.
TileLayout MxScaleLayout(ir::TensorLayout layout);

// A Vec tile whose implicit layout is column-major: [N, 1] with N > 1.
bool IsColumnVector(const ir::TileType& tile);

// A tensor whose innermost dimension is 1 ([M, 1], [B, M, 1]): ptoas infers a column-major (DN)
// view for it, whatever its declaration says, so its view is declared DN (with upstream's strides)
// and only column-vector tiles are loaded from or stored into it.
bool IsColumnVectorTensor(const ir::TensorType& tensor);

// The element strides of a dense row-major `shape`: the last is 1 and each outer one spans
// everything inside it.
std::vector<int64_t> RowMajorStrides(const ir::Shape& shape);

// `!pto.tile_buf<loc=vec, dtype=f32, rows=R, cols=C, v_row=?, v_col=?, blayout=row_major,
// slayout=none_box, fractal=512, pad=0>`. The valid extent is dynamic in the type and given by
// alloc_tile's operands; the layout fields are ImplicitTileLayout's.
// `pad` is the tile_buf's padding mode (0 none; a fillpad result's 1 zero, 2 max, 3 min).
std::string TileBufType(ir::MemorySpace space, std::string_view element, TileExtent extent, int pad = 0);
std::string TileBufType(const ir::TileType& tile, std::string_view element, int pad = 0);
// A tile_buf of `extent` with the given layout: a pto.subset view, which keeps its source's layout.
std::string TileBufType(ir::MemorySpace space, std::string_view element, TileExtent extent, const TileLayout& layout,
                        int pad);

// The MLIR literal of a floating-point constant of `dtype`: "2.00000000000000000e+00", or the bit
// pattern ("0xFF800000") for infinities and NaN, which have no decimal spelling. An error for
// non-finite values of types other than FP32, FP16 and BF16.
pypto::expected<std::string, std::string> FloatLiteral(double value, ir::DataType dtype);

}  // namespace pypto::backend_ptoas
