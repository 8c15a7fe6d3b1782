#include "kernels/select.h"

#include <cstring>

namespace pypto::sim {

void GatherLanes(void* dst, const void* src, size_t rows, size_t cols, size_t elem_bytes, size_t group,
                 size_t lane) {
  auto* out = static_cast<std::byte*>(dst);
  const auto* in = static_cast<const std::byte*>(src);
  const size_t kept = cols / group;
  for (size_t r = 0; r < rows; ++r)
    for (size_t j = 0; j < kept; ++j)
      std::memcpy(out + (r * kept + j) * elem_bytes, in + (r * cols + j * group + lane) * elem_bytes, elem_bytes);
}

void CopyWindow(void* dst, const void* src, size_t rows, size_t cols, size_t src_cols, size_t row0, size_t col0,
                size_t elem_bytes) {
  auto* out = static_cast<std::byte*>(dst);
  const auto* in = static_cast<const std::byte*>(src);
  for (size_t r = 0; r < rows; ++r)
    std::memmove(out + r * cols * elem_bytes, in + ((row0 + r) * src_cols + col0) * elem_bytes, cols * elem_bytes);
}

void InsertWindow(void* dst, const void* src, size_t rows, size_t cols, size_t dst_cols, size_t row0, size_t col0,
                  size_t elem_bytes) {
  auto* out = static_cast<std::byte*>(dst);
  const auto* in = static_cast<const std::byte*>(src);
  for (size_t r = 0; r < rows; ++r)
    std::memmove(out + ((row0 + r) * dst_cols + col0) * elem_bytes, in + r * cols * elem_bytes, cols * elem_bytes);
}

void ConcatColumns(void* dst, const void* left, const void* right, size_t rows, size_t left_cols, size_t right_cols,
                   size_t elem_bytes) {
  auto* out = static_cast<std::byte*>(dst);
  const auto* a = static_cast<const std::byte*>(left);
  const auto* b = static_cast<const std::byte*>(right);
  const size_t left_bytes = left_cols * elem_bytes, right_bytes = right_cols * elem_bytes;
  for (size_t r = 0; r < rows; ++r) {
    std::memcpy(out + r * (left_bytes + right_bytes), a + r * left_bytes, left_bytes);
    std::memcpy(out + r * (left_bytes + right_bytes) + left_bytes, b + r * right_bytes, right_bytes);
  }
}

void TransposeTile(void* dst, const void* src, size_t rows, size_t cols, size_t elem_bytes) {
  auto* out = static_cast<std::byte*>(dst);
  const auto* in = static_cast<const std::byte*>(src);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) std::memcpy(out + (c * rows + r) * elem_bytes, in + (r * cols + c) * elem_bytes, elem_bytes);
}

void Arange(void* dst, int64_t start, bool descending, size_t n, size_t elem_bytes) {
  for (size_t i = 0; i < n; ++i) {
    // Unsigned arithmetic wraps; the low bytes are the value in either signedness.
    const uint64_t step = static_cast<uint64_t>(i);
    const uint64_t value = descending ? static_cast<uint64_t>(start) - step : static_cast<uint64_t>(start) + step;
    if (elem_bytes == 2) {
      const auto narrow = static_cast<uint16_t>(value);
      std::memcpy(static_cast<std::byte*>(dst) + i * 2, &narrow, 2);
    } else {
      const auto narrow = static_cast<uint32_t>(value);
      std::memcpy(static_cast<std::byte*>(dst) + i * 4, &narrow, 4);
    }
  }
}

}  // namespace pypto::sim
