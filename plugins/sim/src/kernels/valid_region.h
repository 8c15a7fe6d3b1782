// Kernels for tiles whose valid region is smaller than the tile: padding the rest (fillpad) and
// reducing only the valid part. Tiles are dense row-major [rows, cols]; the valid region is the
// top-left [valid_rows, valid_cols] corner.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/reduce.h"

namespace pypto::sim {

// dst = src (they may be the same buffer), then every element outside the valid region set to
// the low elem_bytes of pad_bits.
void FillPad(void* dst, const void* src, size_t rows, size_t cols, size_t valid_rows, size_t valid_cols,
             size_t elem_bytes, uint64_t pad_bits);

// dst [rows, cols] = the valid region of src (rows of src_cols elements) in its top-left corner,
// every other element set to the low elem_bytes of pad_bits (tile.fillpad_expand). dst and src are
// distinct buffers.
void FillPadExpand(void* dst, const void* src, size_t rows, size_t cols, size_t src_cols, size_t valid_rows,
                   size_t valid_cols, size_t elem_bytes, uint64_t pad_bits);

// The valid region of dst [rows, cols]: the low elem_bytes of one_bits where col <= row + diagonal
// (upper: col >= row + diagonal), zero elsewhere (pto.ttri). Elements outside it are left as they are.
void Triangle(void* dst, size_t cols, size_t valid_rows, size_t valid_cols, int64_t diagonal, bool upper,
              size_t elem_bytes, uint64_t one_bits);

// dst[r] = reduce(src[r][0:valid_cols]) for r < valid_rows; rows past valid_rows are left as they are.
void RowReduceValidF32(ReduceOp op, float* dst, const float* src, size_t cols, size_t valid_rows, size_t valid_cols);
bool RowReduceValidI32(ReduceOp op, int32_t* dst, const int32_t* src, size_t cols, size_t valid_rows,
                       size_t valid_cols);

// dst[c] = reduce(src[0:valid_rows][c]) for c < valid_cols.
void ColReduceValidF32(ReduceOp op, float* dst, const float* src, size_t cols, size_t valid_rows, size_t valid_cols);
bool ColReduceValidI32(ReduceOp op, int32_t* dst, const int32_t* src, size_t cols, size_t valid_rows,
                       size_t valid_cols);

}  // namespace pypto::sim
