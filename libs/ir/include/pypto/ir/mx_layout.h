// Where an MX scale tensor (TensorLayout::MX_A_ZZ or MX_B_NN) keeps each logical element, so that
// every reader of one (a simulator's load, a test's reference) agrees with the layout's definition.
//
// MX_A_ZZ holds the left operand's scales, logical [M, G] with G = K/32 groups: 16x2 blocks (16
// rows, 2 groups; row-major inside), the blocks row-major over [M/16, G/2].
// MX_B_NN holds the right operand's scales, logical [G, N]: each 2x16 block (2 groups, 16 columns)
// stored transposed (column by column, its 2 groups together), the blocks column-major over
// [G/2, N/16].
#pragma once

#include <cstdint>

#include "pypto/ir/type.h"

namespace pypto::ir {

inline constexpr int64_t kMxBlockRows = 16;  // a block's extent along M (A) or N (B)
inline constexpr int64_t kMxBlockGroups = 2;  // a block's extent along the K groups

// The element index in memory of logical element (row, col) of a [rows, cols] tensor in `layout`.
constexpr int64_t MxElementIndex(TensorLayout layout, int64_t rows, int64_t cols, int64_t row, int64_t col) {
  constexpr int64_t block = kMxBlockRows * kMxBlockGroups;
  switch (layout) {
    case TensorLayout::MX_A_ZZ:
      return ((row / kMxBlockRows) * (cols / kMxBlockGroups) + col / kMxBlockGroups) * block +
             (row % kMxBlockRows) * kMxBlockGroups + col % kMxBlockGroups;
    case TensorLayout::MX_B_NN:
      return ((col / kMxBlockRows) * (rows / kMxBlockGroups) + row / kMxBlockGroups) * block +
             (col % kMxBlockRows) * kMxBlockGroups + row % kMxBlockGroups;
    case TensorLayout::ND: break;
  }
  return row * cols + col;
}

// Whether a [rows, cols] tensor divides into the layout's whole blocks.
constexpr bool MxWholeBlocks(TensorLayout layout, int64_t rows, int64_t cols) {
  if (layout == TensorLayout::MX_A_ZZ) return rows % kMxBlockRows == 0 && cols % kMxBlockGroups == 0;
  if (layout == TensorLayout::MX_B_NN) return rows % kMxBlockGroups == 0 && cols % kMxBlockRows == 0;
  return true;
}

}  // namespace pypto::ir
