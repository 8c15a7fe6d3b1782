#include "kernels/valid_region.h"

#include <cstring>
#include <vector>

namespace pypto::sim {
namespace {

// Writes `count` copies of the pattern's low elem_bytes bytes.
void FillPattern(std::byte* dst, size_t count, size_t elem_bytes, uint64_t pad_bits) {
  std::byte pattern[8];
  std::memcpy(pattern, &pad_bits, sizeof pattern);  // little-endian: the low bytes come first
  for (size_t i = 0; i < count; ++i) std::memcpy(dst + i * elem_bytes, pattern, elem_bytes);
}

// The valid [valid_rows, valid_cols] corner of a tile as a dense array.
template <typename T>
std::vector<T> ValidCorner(const T* src, size_t cols, size_t valid_rows, size_t valid_cols) {
  std::vector<T> dense(valid_rows * valid_cols);
  for (size_t r = 0; r < valid_rows; ++r) std::memcpy(&dense[r * valid_cols], src + r * cols, valid_cols * sizeof(T));
  return dense;
}

}  // namespace

void FillPad(void* dst, const void* src, size_t rows, size_t cols, size_t valid_rows, size_t valid_cols,
             size_t elem_bytes, uint64_t pad_bits) {
  auto* out = static_cast<std::byte*>(dst);
  if (dst != src) std::memmove(dst, src, rows * cols * elem_bytes);
  const size_t row_bytes = cols * elem_bytes;
  for (size_t r = 0; r < valid_rows; ++r)
    FillPattern(out + r * row_bytes + valid_cols * elem_bytes, cols - valid_cols, elem_bytes, pad_bits);
  FillPattern(out + valid_rows * row_bytes, (rows - valid_rows) * cols, elem_bytes, pad_bits);
}

void FillPadExpand(void* dst, const void* src, size_t rows, size_t cols, size_t src_cols, size_t valid_rows,
                   size_t valid_cols, size_t elem_bytes, uint64_t pad_bits) {
  auto* out = static_cast<std::byte*>(dst);
  const auto* in = static_cast<const std::byte*>(src);
  const size_t row_bytes = cols * elem_bytes;
  for (size_t r = 0; r < valid_rows; ++r) {
    std::memcpy(out + r * row_bytes, in + r * src_cols * elem_bytes, valid_cols * elem_bytes);
    FillPattern(out + r * row_bytes + valid_cols * elem_bytes, cols - valid_cols, elem_bytes, pad_bits);
  }
  FillPattern(out + valid_rows * row_bytes, (rows - valid_rows) * cols, elem_bytes, pad_bits);
}

// One row at a time: each row's result lands at or before data not yet read (see reduce.h).
void RowReduceValidF32(ReduceOp op, float* dst, const float* src, size_t cols, size_t valid_rows, size_t valid_cols) {
  for (size_t r = 0; r < valid_rows; ++r) RowReduceF32(op, dst + r, src + r * cols, 1, valid_cols);
}

bool RowReduceValidI32(ReduceOp op, int32_t* dst, const int32_t* src, size_t cols, size_t valid_rows,
                       size_t valid_cols) {
  for (size_t r = 0; r < valid_rows; ++r)
    if (!RowReduceI32(op, dst + r, src + r * cols, 1, valid_cols)) return false;
  return true;
}

void ColReduceValidF32(ReduceOp op, float* dst, const float* src, size_t cols, size_t valid_rows, size_t valid_cols) {
  auto dense = ValidCorner(src, cols, valid_rows, valid_cols);
  ColReduceF32(op, dst, dense.data(), valid_rows, valid_cols);
}

bool ColReduceValidI32(ReduceOp op, int32_t* dst, const int32_t* src, size_t cols, size_t valid_rows,
                       size_t valid_cols) {
  auto dense = ValidCorner(src, cols, valid_rows, valid_cols);
  return ColReduceI32(op, dst, dense.data(), valid_rows, valid_cols);
}

void Triangle(void* dst, size_t cols, size_t valid_rows, size_t valid_cols, int64_t diagonal, bool upper,
              size_t elem_bytes, uint64_t one_bits) {
  auto* out = static_cast<std::byte*>(dst);
  const uint64_t zero = 0;
  for (size_t r = 0; r < valid_rows; ++r) {
    for (size_t c = 0; c < valid_cols; ++c) {
      const int64_t boundary = static_cast<int64_t>(r) + diagonal;
      const bool one = upper ? static_cast<int64_t>(c) >= boundary : static_cast<int64_t>(c) <= boundary;
      std::memcpy(out + (r * cols + c) * elem_bytes, one ? &one_bits : &zero, elem_bytes);
    }
  }
}

}  // namespace pypto::sim
