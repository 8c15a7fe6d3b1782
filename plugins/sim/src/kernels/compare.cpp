// Comparisons pack one bit per element, and a vector's lane count (4 to 16 floats by target) does not
// line up with the mask's bytes, so these are plain loops over elements rather than Highway kernels.
#include "kernels/compare.h"

#include <cstring>

namespace pypto::sim {
namespace {

template <typename T>
bool Holds(CmpOp op, T a, T b) {
  switch (op) {
    case CmpOp::Eq: return a == b;
    case CmpOp::Ne: return a != b;
    case CmpOp::Lt: return a < b;
    case CmpOp::Le: return a <= b;
    case CmpOp::Gt: return a > b;
    case CmpOp::Ge: return a >= b;
  }
  return false;
}

// rhs(r, c) gives the right operand of element (r, c).
template <typename T, class Rhs>
void Compare(CmpOp op, uint8_t* mask, size_t mask_row_bytes, const T* a, size_t rows, size_t cols, Rhs rhs) {
  for (size_t r = 0; r < rows; ++r) {
    uint8_t* row = mask + r * mask_row_bytes;
    std::memset(row, 0, mask_row_bytes);
    for (size_t c = 0; c < cols; ++c)
      if (Holds(op, a[r * cols + c], rhs(r, c))) row[c / 8] = static_cast<uint8_t>(row[c / 8] | (1u << (c % 8)));
  }
}

}  // namespace

void CompareF32(CmpOp op, uint8_t* mask, size_t mask_row_bytes, const float* a, const float* b, size_t rows,
                size_t cols) {
  Compare(op, mask, mask_row_bytes, a, rows, cols, [&](size_t r, size_t c) { return b[r * cols + c]; });
}

void CompareI32(CmpOp op, uint8_t* mask, size_t mask_row_bytes, const int32_t* a, const int32_t* b, size_t rows,
                size_t cols) {
  Compare(op, mask, mask_row_bytes, a, rows, cols, [&](size_t r, size_t c) { return b[r * cols + c]; });
}

void CompareScalarF32(CmpOp op, uint8_t* mask, size_t mask_row_bytes, const float* a, float s, size_t rows,
                      size_t cols) {
  Compare(op, mask, mask_row_bytes, a, rows, cols, [&](size_t, size_t) { return s; });
}

void CompareScalarI32(CmpOp op, uint8_t* mask, size_t mask_row_bytes, const int32_t* a, int32_t s, size_t rows,
                      size_t cols) {
  Compare(op, mask, mask_row_bytes, a, rows, cols, [&](size_t, size_t) { return s; });
}

void SelectByMask(void* dst, const uint8_t* mask, size_t mask_row_bytes, const void* lhs, const void* rhs,
                  size_t rows, size_t cols, size_t elem_bytes) {
  auto* out = static_cast<std::byte*>(dst);
  const auto* left = static_cast<const std::byte*>(lhs);
  const auto* right = static_cast<const std::byte*>(rhs);
  for (size_t r = 0; r < rows; ++r) {
    const uint8_t* bits = mask + r * mask_row_bytes;
    for (size_t c = 0; c < cols; ++c) {
      const size_t at = (r * cols + c) * elem_bytes;
      const bool pick_left = (bits[c / 8] >> (c % 8)) & 1u;
      std::memmove(out + at, (pick_left ? left : right) + at, elem_bytes);
    }
  }
}

void SelectScalarByMask(void* dst, const uint8_t* mask, size_t mask_row_bytes, const void* src, uint64_t scalar_bits,
                        size_t rows, size_t cols, size_t elem_bytes) {
  auto* out = static_cast<std::byte*>(dst);
  const auto* in = static_cast<const std::byte*>(src);
  for (size_t r = 0; r < rows; ++r) {
    const uint8_t* bits = mask + r * mask_row_bytes;
    for (size_t c = 0; c < cols; ++c) {
      const size_t at = (r * cols + c) * elem_bytes;
      if ((bits[c / 8] >> (c % 8)) & 1u) std::memmove(out + at, in + at, elem_bytes);
      else std::memcpy(out + at, &scalar_bits, elem_bytes);  // little-endian: the low bytes first
    }
  }
}

}  // namespace pypto::sim
