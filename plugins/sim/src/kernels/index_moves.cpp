#include "index_moves.h"

#include <cstring>

namespace pypto::sim {
namespace {

int64_t ReadIndex(const void* index, size_t at, size_t index_bytes) {
  const auto* bytes = static_cast<const std::byte*>(index) + at * index_bytes;
  if (index_bytes == 2) {
    int16_t narrow;
    std::memcpy(&narrow, bytes, 2);
    return narrow;
  }
  int32_t wide;
  std::memcpy(&wide, bytes, 4);
  return wide;
}

// Visits each position of the index tile in row-major order with the offset of the element it
// addresses in the data tile; stops at the first index outside [0, data_shape[axis]).
template <typename Visit>
std::optional<BadIndex> ForEachAddressed(const void* index, const AxisIndex& view, Visit visit) {
  size_t count = 1;
  for (size_t d = 0; d < view.rank; ++d) count *= static_cast<size_t>(view.index_shape[d]);
  std::array<int64_t, kMaxIndexRank> coord{};
  for (size_t at = 0; at < count; ++at) {
    const int64_t value = ReadIndex(index, at, view.index_bytes);
    if (value < 0 || value >= view.data_shape[view.axis]) return BadIndex{value, at};
    size_t offset = 0;
    for (size_t d = 0; d < view.rank; ++d) {
      const int64_t c = d == view.axis ? value : coord[d];
      offset = offset * static_cast<size_t>(view.data_shape[d]) + static_cast<size_t>(c);
    }
    visit(at, offset);
    for (size_t d = view.rank; d-- > 0;) {  // the next position, the last coordinate fastest
      if (++coord[d] < view.index_shape[d]) break;
      coord[d] = 0;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<BadIndex> GatherAlong(void* dst, const void* src, const void* index, const AxisIndex& view) {
  auto* out = static_cast<std::byte*>(dst);
  const auto* in = static_cast<const std::byte*>(src);
  const size_t elem = view.elem_bytes;
  return ForEachAddressed(index, view, [&](size_t at, size_t offset) {
    std::memcpy(out + at * elem, in + offset * elem, elem);
  });
}

std::optional<BadIndex> ScatterAlong(void* dst, const void* src, const void* index, const AxisIndex& view) {
  auto* out = static_cast<std::byte*>(dst);
  const auto* in = static_cast<const std::byte*>(src);
  const size_t elem = view.elem_bytes;
  return ForEachAddressed(index, view, [&](size_t at, size_t offset) {
    std::memcpy(out + offset * elem, in + at * elem, elem);
  });
}

void ScatterLanes(void* dst, const void* src, size_t rows, size_t cols, size_t elem_bytes, size_t group, size_t lane) {
  auto* out = static_cast<std::byte*>(dst);
  const auto* in = static_cast<const std::byte*>(src);
  for (size_t r = 0; r < rows; ++r)
    for (size_t j = 0; j < cols; ++j)
      std::memcpy(out + ((r * cols + j) * group + lane) * elem_bytes, in + (r * cols + j) * elem_bytes, elem_bytes);
}

std::optional<BadIndex> ScatterRows(void* dst, const void* src, const void* index, size_t count, size_t index_bytes,
                                    size_t dst_rows, size_t row_len, size_t elem_bytes) {
  auto* out = static_cast<std::byte*>(dst);
  const auto* in = static_cast<const std::byte*>(src);
  const size_t row_bytes = row_len * elem_bytes;
  for (size_t i = 0; i < count; ++i) {
    const int64_t row = ReadIndex(index, i, index_bytes);
    if (row < 0 || static_cast<size_t>(row) >= dst_rows) return BadIndex{row, i};
    std::memcpy(out + static_cast<size_t>(row) * row_bytes, in + i * row_bytes, row_bytes);
  }
  return std::nullopt;
}

void CompareGather(int32_t* indices, uint32_t* counts, const double* values, size_t rows, size_t cols, double kvalue,
                   CompareMode mode, int64_t offset, size_t out_cols) {
  auto holds = [&](double v) {
    switch (mode) {
      case CompareMode::Eq: return v == kvalue;
      case CompareMode::Ne: return v != kvalue;
      case CompareMode::Lt: return v < kvalue;
      case CompareMode::Le: return v <= kvalue;
      case CompareMode::Gt: return v > kvalue;
      case CompareMode::Ge: return v >= kvalue;
    }
    return false;
  };
  for (size_t r = 0; r < rows; ++r) {
    size_t found = 0;
    for (size_t c = 0; c < cols; ++c) {
      if (!holds(values[r * cols + c])) continue;
      if (indices && found < out_cols) indices[r * out_cols + found] = static_cast<int32_t>(offset + c);
      ++found;
    }
    if (indices)
      for (size_t k = found; k < out_cols; ++k) indices[r * out_cols + k] = 0;
    if (counts) counts[r] = static_cast<uint32_t>(found);
  }
}

}  // namespace pypto::sim
