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
  std::vector<SortPair> pairs = ReadPairs(src, lanes / 2);
  std::vector<SortPair> low(2 * run), high(2 * run), merged(kWays * run);
  for (size_t group = 0; group < pairs.size(); group += kWays * run) {
    auto at = [&](size_t k) { return pairs.begin() + static_cast<std::ptrdiff_t>(group + k * run); };
    // std::merge takes equal elements from its first range first, so runs 0..3 keep their order.
    std::merge(at(0), at(1), at(1), at(2), low.begin(), Before);
    std::merge(at(2), at(3), at(3), at(4), high.begin(), Before);
    std::merge(low.begin(), low.end(), high.begin(), high.end(), merged.begin(), Before);
    std::memcpy(dst + 2 * group, merged.data(), merged.size() * sizeof(SortPair));
  }
}

}  // namespace pypto::sim
