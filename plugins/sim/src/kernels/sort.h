// Sorting kernels of the top-k family, on FP32 rows of (value, index) pairs. A sorted row stores
// element j as two lanes: lanes 2j and 2j + 1 hold the value and the bits of its UINT32 index, so a
// row of n values becomes 2n lanes (SortPair is that lane pair).
//
// Order: descending by value, NaN first (as torch.topk ranks NaN above every number). Equal values
// keep their order: within a block, the order of the input (the lower index first for an ascending
// idx); across merged runs, the earlier run first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace pypto::sim {

struct SortPair {
  float value;
  uint32_t index;
};
static_assert(sizeof(SortPair) == 2 * sizeof(float), "a pair is exactly two FP32 lanes");

// Each block of 32 values of every row of src [rows, cols] (cols a multiple of 32), sorted with its
// idx entries into dst [rows, 2 * cols] (as SortPairs).
void Sort32F32(float* dst, const float* src, const uint32_t* idx, size_t rows, size_t cols);

// One row of `lanes` lanes holding sorted runs of `block_len` lanes (block_len even): each group of
// four consecutive runs becomes one sorted run of 4 * block_len lanes in dst. `lanes` is a multiple
// of 4 * block_len.
void MergeSortF32(float* dst, const float* src, size_t lanes, size_t block_len);

// Sorted lists lying back to back in one row of src, `list_lanes[i]` lanes each (even), merged into
// one sorted row of their total length in dst (which must not overlap src).
void MergeListsF32(float* dst, const float* src, std::span<const size_t> list_lanes);

}  // namespace pypto::sim
