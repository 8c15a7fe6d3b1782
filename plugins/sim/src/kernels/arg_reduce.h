// Index-of-extremum reductions (tile.row_argmax/argmin, tile.col_argmax/argmin) over the valid
// [rows, cols] corner of a row-major tile whose rows are `stride` elements apart. Indices are INT32
// and count from the tile's first row or column. Of equal extrema the first wins, and a NaN is
// both the greatest and the least value (its first occurrence wins), as torch.argmax/argmin.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pypto::sim {

enum class ArgReduceOp : uint8_t { Max, Min };

// dst[r] = the column of row r's extremum, for r < rows; rows must be > 0 and cols > 0.
void RowArgReduceF32(ArgReduceOp op, int32_t* dst, const float* src, size_t stride, size_t rows, size_t cols);

// dst[c] = the row of column c's extremum, for c < cols; rows must be > 0 and cols > 0.
void ColArgReduceF32(ArgReduceOp op, int32_t* dst, const float* src, size_t stride, size_t rows, size_t cols);

}  // namespace pypto::sim
