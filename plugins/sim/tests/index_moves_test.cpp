// The kernels that move elements by index, on small hand-made tiles: gathers and scatters along an
// axis (the flat case is rank 1), mask-pattern lanes, whole rows, the compare gather, and the
// pto.trandom generator against Random123's Philox4x32 known answers.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <numeric>
#include <vector>

#include "kernels/index_moves.h"
#include "kernels/random.h"

namespace pypto::sim {
namespace {

AxisIndex View(std::vector<int64_t> index_shape, std::vector<int64_t> data_shape, size_t axis) {
  AxisIndex view;
  view.rank = index_shape.size();
  view.axis = axis;
  for (size_t d = 0; d < view.rank; ++d) {
    view.index_shape[d] = index_shape[d];
    view.data_shape[d] = data_shape[d];
  }
  return view;
}

TEST(IndexMoves, GatherAlongTheMiddleAxis) {
  std::vector<float> src(2 * 4 * 3);
  std::iota(src.begin(), src.end(), 0.0f);  // src[a][b][c] = 12a + 3b + c
  const std::vector<int32_t> index = {3, 0, 1, 2, 2, 2};  // [2, 1, 3]
  std::vector<float> out(6);
  ASSERT_FALSE(GatherAlong(out.data(), src.data(), index.data(), View({2, 1, 3}, {2, 4, 3}, 1)));
  EXPECT_EQ(out, (std::vector<float>{9, 1, 5, 18, 19, 20}));
}

TEST(IndexMoves, AScatterKeepsUnreachedElementsAndTheLaterWriteWins) {
  std::vector<int32_t> dst = {-1, -2, -3, -4, -5, -6};  // [2, 3]
  const std::vector<int32_t> src = {10, 11, 20, 21};
  const std::vector<int16_t> index = {2, 2, 0, 1};  // [2, 2], 16-bit
  AxisIndex view = View({2, 2}, {2, 3}, 1);
  view.index_bytes = 2;
  ASSERT_FALSE(ScatterAlong(dst.data(), src.data(), index.data(), view));
  EXPECT_EQ(dst, (std::vector<int32_t>{-1, -2, 11, 20, 21, -6}));
}

TEST(IndexMoves, AnIndexOutsideItsAxisStopsWithItsPosition) {
  std::vector<float> src(8), out(4);
  const std::vector<int32_t> index = {0, 7, 8, 1};
  const auto bad = GatherAlong(out.data(), src.data(), index.data(), View({4}, {8}, 0));
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->value, 8);
  EXPECT_EQ(bad->position, 2u);
}

TEST(IndexMoves, LanesAndRows) {
  std::vector<float> dst(8, -1.0f);
  const std::vector<float> src = {1, 2, 3, 4};
  ScatterLanes(dst.data(), src.data(), 2, 2, 4, 2, 1);  // P1010 into [2, 4]
  EXPECT_EQ(dst, (std::vector<float>{-1, 1, -1, 2, -1, 3, -1, 4}));
  std::vector<float> rows(6, 0.0f);  // [3, 2]
  const std::vector<int32_t> at = {2, 0};
  ASSERT_FALSE(ScatterRows(rows.data(), src.data(), at.data(), 2, 4, 3, 2, 4));
  EXPECT_EQ(rows, (std::vector<float>{3, 4, 0, 0, 1, 2}));
}

TEST(IndexMoves, CompareGatherListsTheFirstColumnsAndCountsAll) {
  const std::vector<double> values = {5, 1, 7, 9, 0, 0, 0, 0};  // [2, 4]
  std::vector<int32_t> cols(4, -1);
  std::vector<uint32_t> counts(2);
  CompareGather(cols.data(), counts.data(), values.data(), 2, 4, 5, CompareMode::Ge, 10, 2);
  EXPECT_EQ(cols, (std::vector<int32_t>{10, 12, 0, 0}));
  EXPECT_EQ(counts, (std::vector<uint32_t>{3, 0}));
}

TEST(Random, MatchesPhilox4x32KnownAnswers) {
  // Random123's kat_vectors: philox4x32 with 10 rounds.
  std::vector<uint32_t> tile(256);
  RandomTile(tile.data(), 256, 1, 256, {0, 0}, {0, 0, 0, 0}, 10);
  EXPECT_EQ((std::array<uint32_t, 4>{tile[0], tile[64], tile[128], tile[192]}),
            (std::array<uint32_t, 4>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  RandomTile(tile.data(), 256, 1, 256, {0xa4093822, 0x299f31d0}, {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
             10);
  EXPECT_EQ((std::array<uint32_t, 4>{tile[0], tile[64], tile[128], tile[192]}),
            (std::array<uint32_t, 4>{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(Random, FillsOnlyTheValidRegion) {
  std::vector<uint32_t> tile(2 * 64, 7);
  RandomTile(tile.data(), 64, 1, 10, {1, 2}, {3, 4, 5, 6}, 7);
  EXPECT_NE(tile[9], 7u);
  EXPECT_EQ(tile[10], 7u);
  EXPECT_EQ(tile[64], 7u);
}

}  // namespace
}  // namespace pypto::sim
