// Kernels that copy chosen lanes of a tile: the lanes a mask pattern keeps (gather, mask form) and
// a rectangular window (a tile slice), two tiles side by side (concat) and a transpose. They move raw elements of 1 to 8 bytes, whatever their type:
// gather may reinterpret FP32 lanes as INT32 (the index bits of a sorted row).
#pragma once

#include <cstddef>
#include <cstdint>

namespace pypto::sim {

// dst[r][j] = src[r][j * group + lane] for a src of [rows, cols] elements of elem_bytes each.
void GatherLanes(void* dst, const void* src, size_t rows, size_t cols, size_t elem_bytes, size_t group,
                 size_t lane);

// dst [rows, cols] = the window of src (rows of src_cols elements) starting at (row0, col0).
void CopyWindow(void* dst, const void* src, size_t rows, size_t cols, size_t src_cols, size_t row0, size_t col0,
                size_t elem_bytes);

// The window at (row0, col0) of dst [.., dst_cols] = src [rows, cols]: the inverse of CopyWindow.
void InsertWindow(void* dst, const void* src, size_t rows, size_t cols, size_t dst_cols, size_t row0, size_t col0,
                  size_t elem_bytes);

// dst [rows, left_cols + right_cols]: each row of left, then the same row of right.
void ConcatColumns(void* dst, const void* left, const void* right, size_t rows, size_t left_cols, size_t right_cols,
                   size_t elem_bytes);

// dst [cols, rows] = the transpose of src [rows, cols].
void TransposeTile(void* dst, const void* src, size_t rows, size_t cols, size_t elem_bytes);

// dst[i] = start + i (start - i when descending), wrapping around in the element type:
// elem_bytes 4 (INT32/UINT32) or 2 (INT16/UINT16).
void Arange(void* dst, int64_t start, bool descending, size_t n, size_t elem_bytes);

}  // namespace pypto::sim
