#include "kernels/sort.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace pypto::sim {
namespace {

constexpr size_t kBlock = 32;
constexpr size_t kWays = 4;

// Strict weak order: NaN before every number, then larger values first.
bool Before(const SortPair& a, const SortPair& b) {
  if (std::isnan(a.value)) return !std::isnan(b.value);
  if (std::isnan(b.value)) return false;
  return a.value > b.value;
}

// The lanes are FP32 memory; copying them as pairs keeps the index bits exact.
std::vector<SortPair> ReadPairs(const float* lanes, size_t pairs) {
  std::vector<SortPair> out(pairs);
  std::memcpy(out.data(), lanes, pairs * sizeof(SortPair));
  return out;
}

// The sorted runs lying back to back in `pairs`, `lengths[i]` pairs each, merged into `out`. Each
// std::merge takes equal elements from its first range first, and the runs merged so far are that
// range, so an earlier run wins ties.
void MergeRuns(const SortPair* pairs, std::span<const size_t> lengths, SortPair* out) {
  size_t merged = 0;
  std::vector<SortPair> scratch;
  for (size_t length : lengths) {
    scratch.assign(out, out + merged);
    std::merge(scratch.begin(), scratch.end(), pairs + merged, pairs + merged + length, out, Before);
    merged += length;
  }
}

}  // namespace

void Sort32F32(float* dst, const float* src, const uint32_t* idx, size_t rows, size_t cols) {
  std::vector<SortPair> block(kBlock);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c0 = 0; c0 < cols; c0 += kBlock) {
      for (size_t j = 0; j < kBlock; ++j) block[j] = {src[r * cols + c0 + j], idx[r * cols + c0 + j]};
      std::stable_sort(block.begin(), block.end(), Before);
      std::memcpy(dst + r * 2 * cols + 2 * c0, block.data(), kBlock * sizeof(SortPair));
    }
  }
}

void MergeSortF32(float* dst, const float* src, size_t lanes, size_t block_len) {
  const size_t run = block_len / 2;  // pairs per input run
  const std::vector<SortPair> pairs = ReadPairs(src, lanes / 2);
  const std::vector<size_t> runs(kWays, run);
  std::vector<SortPair> merged(kWays * run);
  for (size_t group = 0; group < pairs.size(); group += kWays * run) {
    MergeRuns(pairs.data() + group, runs, merged.data());
    std::memcpy(dst + 2 * group, merged.data(), merged.size() * sizeof(SortPair));
  }
}

void MergeListsF32(float* dst, const float* src, std::span<const size_t> list_lanes) {
  std::vector<size_t> runs;
  size_t total = 0;
  for (size_t lanes : list_lanes) {
    runs.push_back(lanes / 2);
    total += lanes / 2;
  }
  const std::vector<SortPair> pairs = ReadPairs(src, total);
  std::vector<SortPair> merged(total);
  MergeRuns(pairs.data(), runs, merged.data());
  std::memcpy(dst, merged.data(), merged.size() * sizeof(SortPair));
}

}  // namespace pypto::sim
