// Kernels that move elements by index: gathers reading a source at indices, scatters writing a
// destination at indices. They move raw elements of 1 to 8 bytes, whatever their type; the indices
// are signed integers of index_bytes (2 or 4). A scatter writes into dst, which holds the input
// already; the elements no index reaches keep their value, and of two writes to one element the later
// (in row-major order of the index) wins.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace pypto::sim {

inline constexpr size_t kMaxIndexRank = 8;

// An index tile reaching into a data tile along `axis`: both of `rank` dimensions, the index no longer
// than the data on any other axis. A flat (row-major) index is the rank-1 case.
struct AxisIndex {
  size_t rank = 1, axis = 0;
  std::array<int64_t, kMaxIndexRank> index_shape{}, data_shape{};
  size_t index_bytes = 4, elem_bytes = 4;
  bool flat = false;  // a flat index (what an error message says)
};

// An index outside its range: its value and its position (row-major) in the index tile.
struct BadIndex {
  int64_t value = 0;
  size_t position = 0;
};

// dst (the index's shape) = src[.., index[..], ..] with the index replacing coordinate `axis`.
std::optional<BadIndex> GatherAlong(void* dst, const void* src, const void* index, const AxisIndex& view);

// dst[.., index[..], ..] = src[..] (src has the index's shape).
std::optional<BadIndex> ScatterAlong(void* dst, const void* src, const void* index, const AxisIndex& view);

// dst[r][j * group + lane] = src[r][j] for a src of [rows, cols]: the inverse of GatherLanes.
void ScatterLanes(void* dst, const void* src, size_t rows, size_t cols, size_t elem_bytes, size_t group, size_t lane);

// Row index.flat[i] of dst (dst_rows rows of row_len elements) = row i of src, for `count` indices.
std::optional<BadIndex> ScatterRows(void* dst, const void* src, const void* index, size_t count, size_t index_bytes,
                                    size_t dst_rows, size_t row_len, size_t elem_bytes);

// The comparisons of the compare-form gather, in upstream's cmp_mode order.
enum class CompareMode : uint8_t { Eq, Ne, Lt, Le, Gt, Ge };

// Per row of values [rows, cols]: the columns (plus offset) of the elements comparing true against
// kvalue, the first out_cols of them into indices [rows, out_cols] (the rest 0), when indices is
// given; how many compare true into counts [rows], when counts is given.
void CompareGather(int32_t* indices, uint32_t* counts, const double* values, size_t rows, size_t cols, double kvalue,
                   CompareMode mode, int64_t offset, size_t out_cols);

}  // namespace pypto::sim
