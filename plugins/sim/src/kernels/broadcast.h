// Broadcasts over a dense row-major [rows, cols] tile: a per-row vector ([rows, 1]) or a per-column
// vector ([1, cols]) combined with every element, plain broadcast copies, and fills. `dst` may be the
// same array as any source, the vector included (it is then copied before the tile is written).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/elementwise.h"

namespace pypto::sim {

// dst[r][c] = src[r][c] op row_vec[r]. Any BinaryOp (Add, Sub, Mul, Div, Max, Min).
void RowExpandF32(BinaryOp op, float* dst, const float* src, const float* row_vec, size_t rows, size_t cols);

// dst[r][c] = src[r][c] op col_vec[c].
void ColExpandF32(BinaryOp op, float* dst, const float* src, const float* col_vec, size_t rows, size_t cols);

// The same on INT32 tiles (see BinaryI32); false when dividing by zero.
bool RowExpandI32(BinaryOp op, int32_t* dst, const int32_t* src, const int32_t* row_vec, size_t rows, size_t cols);
bool ColExpandI32(BinaryOp op, int32_t* dst, const int32_t* src, const int32_t* col_vec, size_t rows, size_t cols);

// dst[r][c] = exp(src[r][c] - row_vec[r]) (the softmax numerator).
void RowExpandExpDifF32(float* dst, const float* src, const float* row_vec, size_t rows, size_t cols);

// dst[r][c] = exp(src[r][c] - col_vec[c]).
void ColExpandExpDifF32(float* dst, const float* src, const float* col_vec, size_t rows, size_t cols);

// dst[r][c] = row_vec[r].
void RowBroadcastF32(float* dst, const float* row_vec, size_t rows, size_t cols);

// dst[r][c] = col_vec[c].
void ColBroadcastF32(float* dst, const float* col_vec, size_t rows, size_t cols);

void RowBroadcastI32(int32_t* dst, const int32_t* row_vec, size_t rows, size_t cols);
void ColBroadcastI32(int32_t* dst, const int32_t* col_vec, size_t rows, size_t cols);

void FillF32(float* dst, float value, size_t n);
void FillI32(int32_t* dst, int32_t value, size_t n);

}  // namespace pypto::sim
