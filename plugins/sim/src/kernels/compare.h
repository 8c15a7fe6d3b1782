// Element-wise comparisons into a packed predicate mask, the layout the PTO compare instructions
// (TCMP, TCMPS) write and TSEL reads: row r of an [rows, cols] comparison is `mask_row_bytes` bytes
// of the mask, element c's predicate in bit c % 8 (the least significant bit first) of byte c / 8.
// A row's bytes past ceil(cols / 8) are zero.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pypto::sim {

// Upstream's cmp_type numbering. A NaN operand makes Ne true and the others false (IEEE, torch).
enum class CmpOp : uint8_t { Eq, Ne, Lt, Le, Gt, Ge };

// mask bit (r, c) = a[r][c] op b[r][c], for dense row-major [rows, cols] operands.
void CompareF32(CmpOp op, uint8_t* mask, size_t mask_row_bytes, const float* a, const float* b, size_t rows,
                size_t cols);
void CompareI32(CmpOp op, uint8_t* mask, size_t mask_row_bytes, const int32_t* a, const int32_t* b, size_t rows,
                size_t cols);

// mask bit (r, c) = a[r][c] op s.
void CompareScalarF32(CmpOp op, uint8_t* mask, size_t mask_row_bytes, const float* a, float s, size_t rows,
                      size_t cols);
void CompareScalarI32(CmpOp op, uint8_t* mask, size_t mask_row_bytes, const int32_t* a, int32_t s, size_t rows,
                      size_t cols);

// dst[r][c] = mask bit (r, c) ? lhs[r][c] : rhs[r][c], for elements of elem_bytes bytes of any type.
// dst may be the same array as lhs or rhs.
void SelectByMask(void* dst, const uint8_t* mask, size_t mask_row_bytes, const void* lhs, const void* rhs,
                  size_t rows, size_t cols, size_t elem_bytes);

// dst[r][c] = mask bit (r, c) ? src[r][c] : the low elem_bytes of scalar_bits. dst may be src.
void SelectScalarByMask(void* dst, const uint8_t* mask, size_t mask_row_bytes, const void* src, uint64_t scalar_bits,
                        size_t rows, size_t cols, size_t elem_bytes);

}  // namespace pypto::sim
