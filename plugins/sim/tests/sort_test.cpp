// The top-k kernels on small hand-made rows: sort32 (ties, NaN, several rows), the 4-way merge of
// sorted runs, the merge of 2 to 4 separate lists, mask-pattern lane selection, tile windows and index rows.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "kernels/select.h"
#include "kernels/sort.h"

namespace pypto::sim {
namespace {

// The (value, index) pairs of a sorted row of lanes.
std::vector<std::pair<float, uint32_t>> Pairs(const std::vector<float>& lanes) {
  std::vector<std::pair<float, uint32_t>> out;
  for (size_t j = 0; j + 1 < lanes.size(); j += 2) out.emplace_back(lanes[j], std::bit_cast<uint32_t>(lanes[j + 1]));
  return out;
}

std::vector<uint32_t> Iota(size_t n, uint32_t start = 0) {
  std::vector<uint32_t> idx(n);
  std::iota(idx.begin(), idx.end(), start);
  return idx;
}

TEST(Sort32, SortsEachBlockDescendingWithItsIndices) {
  std::vector<float> src(64);
  for (size_t j = 0; j < 64; ++j) src[j] = static_cast<float>((j * 7) % 32);  // a permutation per block
  std::vector<float> dst(128);
  const auto idx = Iota(64, 100);
  Sort32F32(dst.data(), src.data(), idx.data(), 1, 64);
  auto pairs = Pairs(dst);
  for (size_t block = 0; block < 2; ++block) {
    for (size_t k = 0; k < 32; ++k) {
      const auto [value, index] = pairs[block * 32 + k];
      EXPECT_EQ(value, 31.0F - static_cast<float>(k));
      EXPECT_EQ(src[index - 100], value);                       // the index travels with its value
      EXPECT_EQ((index - 100) / 32, block) << "stays in its block";
    }
  }
}

TEST(Sort32, TiesKeepTheirInputOrderAndNaNComesFirst) {
  std::vector<float> src(32, 1.0F);
  src[3] = 5.0F;
  src[9] = 5.0F;
  src[20] = std::numeric_limits<float>::quiet_NaN();
  src[30] = -2.0F;
  std::vector<float> dst(64);
  const auto idx = Iota(32);
  Sort32F32(dst.data(), src.data(), idx.data(), 1, 32);
  auto pairs = Pairs(dst);
  EXPECT_TRUE(std::isnan(pairs[0].first));
  EXPECT_EQ(pairs[0].second, 20U);
  EXPECT_EQ(pairs[1], std::make_pair(5.0F, 3U));
  EXPECT_EQ(pairs[2], std::make_pair(5.0F, 9U));
  // The 1.0 ties follow in index order: 0, 1, 2, 4, 5, ...
  EXPECT_EQ(pairs[3], std::make_pair(1.0F, 0U));
  EXPECT_EQ(pairs[4], std::make_pair(1.0F, 1U));
  EXPECT_EQ(pairs[6], std::make_pair(1.0F, 4U));
  EXPECT_EQ(pairs[31], std::make_pair(-2.0F, 30U));
}

TEST(Sort32, EveryRowUsesItsOwnIndices) {
  std::vector<float> src(64);
  for (size_t j = 0; j < 32; ++j) src[j] = static_cast<float>(j);         // row 0 ascending
  for (size_t j = 0; j < 32; ++j) src[32 + j] = -static_cast<float>(j);  // row 1 descending
  std::vector<float> dst(128);
  const auto idx = Iota(64);
  Sort32F32(dst.data(), src.data(), idx.data(), 2, 32);
  auto pairs = Pairs(dst);
  EXPECT_EQ(pairs[0], std::make_pair(31.0F, 31U));
  EXPECT_EQ(pairs[31], std::make_pair(0.0F, 0U));
  EXPECT_EQ(pairs[32], std::make_pair(0.0F, 32U));
  EXPECT_EQ(pairs[63], std::make_pair(-31.0F, 63U));
}

// Lanes of sorted runs, each given as its values (indices are the values' positions in `runs`).
std::vector<float> RunLanes(const std::vector<std::vector<float>>& runs) {
  std::vector<float> lanes;
  uint32_t index = 0;
  for (const auto& run : runs) {
    for (float value : run) {
      lanes.push_back(value);
      lanes.push_back(std::bit_cast<float>(index++));
    }
  }
  return lanes;
}

TEST(MergeSort, MergesFourRunsWithEarlierRunsFirstOnTies) {
  // block_len 8 lanes = 4 pairs per run; two groups of four runs.
  const std::vector<std::vector<float>> runs = {{9, 5, 2, 2}, {8, 5, 3, 0}, {7, 6, 5, 1}, {10, 4, 2, -1},
                                                {1, 1, 1, 1}, {4, 3, 2, 1}, {0, 0, 0, 0}, {5, 1, 1, -3}};
  const auto src = RunLanes(runs);
  std::vector<float> dst(src.size());
  MergeSortF32(dst.data(), src.data(), src.size(), 8);
  auto pairs = Pairs(dst);
  const std::vector<std::pair<float, uint32_t>> first = {{10, 12}, {9, 0}, {8, 4},  {7, 8},  {6, 9},  {5, 1},
                                                         {5, 5},   {5, 10}, {4, 13}, {3, 6},  {2, 2},  {2, 3},
                                                         {2, 14},  {1, 11}, {0, 7},  {-1, 15}};
  EXPECT_EQ(std::vector(pairs.begin(), pairs.begin() + 16), first);
  const std::vector<std::pair<float, uint32_t>> second = {{5, 28},  {4, 20}, {3, 21}, {2, 22}, {1, 16}, {1, 17},
                                                          {1, 18},  {1, 19}, {1, 23}, {1, 29}, {1, 30}, {0, 24},
                                                          {0, 25},  {0, 26}, {0, 27}, {-3, 31}};
  EXPECT_EQ(std::vector(pairs.begin() + 16, pairs.end()), second);
}

TEST(MergeSort, Sort32ThenTwoMergesSortsARow) {
  constexpr size_t n = 512;
  std::vector<float> src(n);
  for (size_t j = 0; j < n; ++j) src[j] = static_cast<float>((j * 389) % 521) - 200.0F;
  const auto idx = Iota(n);
  std::vector<float> sorted(2 * n), merged(2 * n), whole(2 * n);
  Sort32F32(sorted.data(), src.data(), idx.data(), 1, n);
  MergeSortF32(merged.data(), sorted.data(), 2 * n, 64);
  MergeSortF32(whole.data(), merged.data(), 2 * n, 256);
  auto pairs = Pairs(whole);
  for (size_t k = 0; k < n; ++k) {
    EXPECT_EQ(src[pairs[k].second], pairs[k].first);
    if (k > 0) EXPECT_GE(pairs[k - 1].first, pairs[k].first) << k;
  }
}

TEST(MergeLists, MergesListsOfDifferentLengthsWithEarlierListsFirstOnTies) {
  // Three lists of 3, 1 and 4 pairs (6, 2 and 8 lanes).
  const std::vector<std::vector<float>> lists = {{9, 4, 4}, {4}, {10, 4, 3, -2}};
  const auto src = RunLanes(lists);
  std::vector<float> dst(src.size());
  const std::vector<size_t> lanes = {6, 2, 8};
  MergeListsF32(dst.data(), src.data(), lanes);
  const std::vector<std::pair<float, uint32_t>> expected = {{10, 4}, {9, 0}, {4, 1}, {4, 2},
                                                            {4, 3},  {4, 5}, {3, 6}, {-2, 7}};
  EXPECT_EQ(Pairs(dst), expected);
}

TEST(GatherLanes, PatternsPickTheirLanes) {
  std::vector<int32_t> src(16);
  std::iota(src.begin(), src.end(), 0);  // two rows of 8
  std::vector<int32_t> dst(8);
  GatherLanes(dst.data(), src.data(), 2, 8, 4, 2, 0);  // P0101
  EXPECT_EQ(dst, (std::vector<int32_t>{0, 2, 4, 6, 8, 10, 12, 14}));
  GatherLanes(dst.data(), src.data(), 2, 8, 4, 2, 1);  // P1010
  EXPECT_EQ(dst, (std::vector<int32_t>{1, 3, 5, 7, 9, 11, 13, 15}));
  std::vector<int32_t> quarter(4);
  GatherLanes(quarter.data(), src.data(), 2, 8, 4, 4, 3);  // P1000
  EXPECT_EQ(quarter, (std::vector<int32_t>{3, 7, 11, 15}));
  std::vector<uint16_t> half_src = {10, 11, 12, 13}, half_dst(2);
  GatherLanes(half_dst.data(), half_src.data(), 1, 4, 2, 2, 1);
  EXPECT_EQ(half_dst, (std::vector<uint16_t>{11, 13}));
}

TEST(GatherLanes, ReinterpretsIndexBitsExactly) {
  const std::vector<float> lanes = {2.5F, std::bit_cast<float>(7U), -1.0F, std::bit_cast<float>(0x7fffffffU)};
  std::vector<int32_t> indices(2);
  GatherLanes(indices.data(), lanes.data(), 1, 4, 4, 2, 1);
  EXPECT_EQ(indices, (std::vector<int32_t>{7, 0x7fffffff}));
}

TEST(CopyWindow, CopiesARectangle) {
  std::vector<float> src(4 * 6);
  std::iota(src.begin(), src.end(), 0.0F);
  std::vector<float> dst(2 * 3);
  CopyWindow(dst.data(), src.data(), 2, 3, 6, 1, 2, 4);
  EXPECT_EQ(dst, (std::vector<float>{8, 9, 10, 14, 15, 16}));
}

TEST(Arange, CountsUpOrDownAndWraps) {
  std::vector<int32_t> up(4), down(4);
  Arange(up.data(), 5, false, 4, 4);
  EXPECT_EQ(up, (std::vector<int32_t>{5, 6, 7, 8}));
  Arange(down.data(), 1, true, 4, 4);
  EXPECT_EQ(down, (std::vector<int32_t>{1, 0, -1, -2}));
  std::vector<uint16_t> narrow(3);
  Arange(narrow.data(), 65534, false, 3, 2);
  EXPECT_EQ(narrow, (std::vector<uint16_t>{65534, 65535, 0}));
}

}  // namespace
}  // namespace pypto::sim
