#include "range_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace pypto::rt {
namespace {

std::vector<int> Overlapping(const RangeIndex<int>& index, ByteRange range) {
  std::vector<int> found;
  index.ForEachOverlapping(range, [&](int value) { found.push_back(value); });
  std::sort(found.begin(), found.end());
  return found;
}

TEST(RangeIndex, FindsOverlapsAmongDisjointSlicesButNotNeighbours) {
  RangeIndex<int> index;
  for (int i = 0; i < 8; ++i) index.Insert({uint64_t(i) * 4, uint64_t(i) * 4 + 4}, i);
  EXPECT_EQ(Overlapping(index, {8, 12}), (std::vector<int>{2}));
  EXPECT_EQ(Overlapping(index, {6, 13}), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(Overlapping(index, {0, 32}), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_TRUE(Overlapping(index, {32, 40}).empty());  // touching the last slice is not overlapping it
  EXPECT_TRUE(Overlapping(index, {9, 9}).empty());    // an empty range overlaps nothing
}

TEST(RangeIndex, ALongRangeIsFoundFarFromItsStart) {
  RangeIndex<int> index;
  index.Insert({0, 1000}, 1);
  for (int i = 0; i < 10; ++i) index.Insert({uint64_t(i) * 100 + 50, uint64_t(i) * 100 + 51}, 10 + i);
  EXPECT_EQ(Overlapping(index, {990, 995}), (std::vector<int>{1}));
  EXPECT_EQ(Overlapping(index, {950, 951}), (std::vector<int>{1, 19}));
}

TEST(RangeIndex, EqualRangesAreKeptApartAndErasedByHandle) {
  RangeIndex<int> index;
  std::vector<RangeIndex<int>::Handle> handles;
  for (int i = 0; i < 4; ++i) handles.push_back(index.Insert({16, 32}, i));
  index.Erase(handles[1]);
  EXPECT_EQ(Overlapping(index, {20, 21}), (std::vector<int>{0, 2, 3}));
  for (int i : {0, 2, 3}) index.Erase(handles[static_cast<size_t>(i)]);
  EXPECT_TRUE(index.empty());
}

TEST(RangeIndex, EraseCoveredKeepsWhatReachesOutside) {
  RangeIndex<int> index;
  index.Insert({0, 8}, 0);    // inside [0, 16)
  index.Insert({8, 16}, 1);   // inside
  index.Insert({12, 20}, 2);  // reaches past the end
  index.Insert({16, 24}, 3);  // outside
  std::vector<int> erased;
  index.EraseCovered({0, 16}, [&](int value) { erased.push_back(value); });
  std::sort(erased.begin(), erased.end());
  EXPECT_EQ(erased, (std::vector<int>{0, 1}));
  EXPECT_EQ(Overlapping(index, {0, 100}), (std::vector<int>{2, 3}));
}

// Random inserts, erasures and covering erasures against a list searched exhaustively.
TEST(RangeIndex, AgreesWithAnExhaustiveSearch) {
  struct Held {
    ByteRange range;
    int value;
    RangeIndex<int>::Handle handle;
  };
  std::mt19937 random(7);
  const auto random_range = [&](uint64_t max_length) {
    const uint64_t first = random() % 256;
    return ByteRange{first, first + 1 + random() % max_length};
  };
  RangeIndex<int> index;
  std::vector<Held> held;
  for (int step = 0; step < 4000; ++step) {
    const unsigned what = random() % 8;
    if (what < 4) {
      const ByteRange range = random_range(what == 0 ? 128 : 8);
      held.push_back({range, step, index.Insert(range, step)});
    } else if (what < 6 && !held.empty()) {
      const size_t victim = random() % held.size();
      index.Erase(held[victim].handle);
      held.erase(held.begin() + static_cast<std::ptrdiff_t>(victim));
    } else if (what == 6) {
      const ByteRange cover = random_range(32);
      std::vector<int> erased;
      index.EraseCovered(cover, [&](int value) { erased.push_back(value); });
      std::vector<int> expected;
      std::erase_if(held, [&](const Held& h) {
        const bool inside = cover.first <= h.range.first && h.range.last <= cover.last;
        if (inside) expected.push_back(h.value);
        return inside;
      });
      std::sort(erased.begin(), erased.end());
      ASSERT_EQ(erased, expected) << "step " << step;
    } else {
      const ByteRange query = random_range(64);
      std::vector<int> expected;
      for (const Held& h : held)
        if (h.range.overlaps(query)) expected.push_back(h.value);
      ASSERT_EQ(Overlapping(index, query), expected) << "step " << step;
    }
    ASSERT_EQ(index.empty(), held.empty());
  }
}

}  // namespace
}  // namespace pypto::rt
