#include "pipe_split.h"

#include <algorithm>
#include <cstring>

namespace pypto::rt {

const char* PipeSplitName(PipeSplit split) {
  switch (split) {
    case PipeSplit::Whole: return "whole";
    case PipeSplit::UpDown: return "up-down";
    case PipeSplit::LeftRight: return "left-right";
  }
  return "?";
}

std::pair<int64_t, int64_t> LaneBox(PipeSplit split, int64_t rows, int64_t cols) {
  if (split == PipeSplit::UpDown) return {(rows + 1) / 2, cols};
  if (split == PipeSplit::LeftRight) return {rows, (cols + 1) / 2};
  return {rows, cols};
}

namespace {

// Calls copy(whole_byte, half_byte, bytes) for each run of elements lane `lane` shares with the
// whole tile, one per row of its half.
template <typename Copy>
void ForEachLaneRun(PipeSplit split, int lane, size_t whole_bytes, int64_t rows, int64_t cols, Copy copy) {
  if (rows <= 0 || cols <= 0) return;
  const auto elem = static_cast<int64_t>(whole_bytes) / (rows * cols);
  const auto [box_rows, box_cols] = LaneBox(split, rows, cols);
  // The lane's part of the whole tile: rows [row0, row_end) x cols [col0, col_end).
  const int64_t row0 = split == PipeSplit::UpDown ? lane * box_rows : 0;
  const int64_t col0 = split == PipeSplit::LeftRight ? lane * box_cols : 0;
  const int64_t row_end = std::min(rows, row0 + box_rows), col_end = std::min(cols, col0 + box_cols);
  for (int64_t r = row0; r < row_end; ++r)
    copy(static_cast<size_t>((r * cols + col0) * elem), static_cast<size_t>(((r - row0) * box_cols) * elem),
         static_cast<size_t>((col_end - col0) * elem));
}

}  // namespace

void CopyLaneHalfOut(PipeSplit split, int lane, std::span<const std::byte> whole, int64_t rows, int64_t cols,
                     std::span<std::byte> half) {
  std::fill(half.begin(), half.end(), std::byte{0});
  ForEachLaneRun(split, lane, whole.size(), rows, cols, [&](size_t from, size_t to, size_t bytes) {
    std::memcpy(half.data() + to, whole.data() + from, bytes);
  });
}

void CopyLaneHalfIn(PipeSplit split, int lane, std::span<const std::byte> half, std::span<std::byte> whole,
                    int64_t rows, int64_t cols) {
  ForEachLaneRun(split, lane, whole.size(), rows, cols, [&](size_t to, size_t from, size_t bytes) {
    std::memcpy(whole.data() + to, half.data() + from, bytes);
  });
}

}  // namespace pypto::rt
