// Index-of-extremum kernels against plain reference loops: the first of equal values, NaN as the
// extremum, and a valid corner read out of a wider tile (the elements past it must not count).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/arg_reduce.h"

namespace pypto::sim {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// A 3 x 6 tile whose valid corner is 3 x 4; the two columns past it hold values that would win.
const std::vector<float> kTile = {
    2, 5, 5, 1, 99, -99,  //
    7, 7, 0, 0, 99, -99,  //
    2, 5, 3, 0, 99, -99,  //
};

TEST(ArgReduce, RowsPickTheFirstExtremumOfTheirValidColumns) {
  std::vector<int32_t> max(3, -1), min(3, -1);
  RowArgReduceF32(ArgReduceOp::Max, max.data(), kTile.data(), 6, 3, 4);
  RowArgReduceF32(ArgReduceOp::Min, min.data(), kTile.data(), 6, 3, 4);
  EXPECT_EQ(max, (std::vector<int32_t>{1, 0, 1}));
  EXPECT_EQ(min, (std::vector<int32_t>{3, 2, 3}));
}

TEST(ArgReduce, ColumnsPickTheFirstExtremumOfTheirValidRows) {
  std::vector<int32_t> max(6, -1), min(6, -1);
  ColArgReduceF32(ArgReduceOp::Max, max.data(), kTile.data(), 6, 3, 4);
  ColArgReduceF32(ArgReduceOp::Min, min.data(), kTile.data(), 6, 2, 4);
  EXPECT_EQ(max, (std::vector<int32_t>{1, 1, 0, 0, -1, -1}));  // only the 4 valid columns are written
  EXPECT_EQ(min, (std::vector<int32_t>{0, 0, 1, 1, -1, -1}));  // rows 0 and 1 only
}

TEST(ArgReduce, TheFirstNaNIsTheExtremum) {
  const std::vector<float> row = {1, kNaN, 9, kNaN, -9};
  int32_t max = -1, min = -1;
  RowArgReduceF32(ArgReduceOp::Max, &max, row.data(), 5, 1, 5);
  RowArgReduceF32(ArgReduceOp::Min, &min, row.data(), 5, 1, 5);
  EXPECT_EQ(max, 1);
  EXPECT_EQ(min, 1);
  std::vector<int32_t> cols(1, -1);
  ColArgReduceF32(ArgReduceOp::Min, cols.data(), row.data(), 1, 5, 1);  // the row read as a column
  EXPECT_EQ(cols[0], 1);
}

TEST(ArgReduce, AgreesWithAReferenceOnRandomTiles) {
  uint32_t state = 12345;
  auto next = [&] { return (state = state * 1664525u + 1013904223u) >> 24; };  // few distinct values: ties
  for (size_t rows : {1u, 5u, 16u}) {
    for (size_t cols : {1u, 7u, 64u}) {
      std::vector<float> tile(rows * cols);
      for (float& x : tile) x = static_cast<float>(next() % 8);
      std::vector<int32_t> row_max(rows), col_min(cols);
      RowArgReduceF32(ArgReduceOp::Max, row_max.data(), tile.data(), cols, rows, cols);
      ColArgReduceF32(ArgReduceOp::Min, col_min.data(), tile.data(), cols, rows, cols);
      for (size_t r = 0; r < rows; ++r) {
        size_t best = 0;
        for (size_t c = 0; c < cols; ++c)
          if (tile[r * cols + c] > tile[r * cols + best]) best = c;
        EXPECT_EQ(row_max[r], static_cast<int32_t>(best)) << rows << "x" << cols << " row " << r;
      }
      for (size_t c = 0; c < cols; ++c) {
        size_t best = 0;
        for (size_t r = 0; r < rows; ++r)
          if (tile[r * cols + c] < tile[best * cols + c]) best = r;
        EXPECT_EQ(col_min[c], static_cast<int32_t>(best)) << rows << "x" << cols << " column " << c;
      }
    }
  }
}

}  // namespace
}  // namespace pypto::sim
