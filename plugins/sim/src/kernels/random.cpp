#include "random.h"

namespace pypto::sim {
namespace {

constexpr uint32_t kMultiplier0 = 0xD2511F53u;
constexpr uint32_t kMultiplier1 = 0xCD9E8D57u;
constexpr uint32_t kKeyStep0 = 0x9E3779B9u;  // the golden ratio's bits
constexpr uint32_t kKeyStep1 = 0xBB67AE85u;  // sqrt(3) - 1's bits
constexpr size_t kLanes = 64;                // 32-bit words in one 256-byte repeat
constexpr size_t kRepeats = 4;               // words one counter yields

using Counter = std::array<uint32_t, 4>;

// The 128-bit counter plus `value`, carrying from the low word up.
Counter Advanced(Counter counter, uint64_t value) {
  for (uint32_t& word : counter) {
    value += word;
    word = static_cast<uint32_t>(value);
    value >>= 32;
    if (value == 0) break;
  }
  return counter;
}

Counter Rounds(Counter c, std::array<uint32_t, 2> key, int rounds) {
  for (int round = 0; round < rounds; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(c[0]) * kMultiplier0;
    const uint64_t p1 = static_cast<uint64_t>(c[2]) * kMultiplier1;
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ key[0], static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ key[1], static_cast<uint32_t>(p0)};
    key[0] += kKeyStep0;
    key[1] += kKeyStep1;
  }
  return c;
}

}  // namespace

void RandomTile(uint32_t* dst, size_t row_stride, size_t valid_rows, size_t valid_cols,
                const std::array<uint32_t, 2>& key, const std::array<uint32_t, 4>& counter, int rounds) {
  constexpr size_t kBlock = kLanes * kRepeats;  // columns one run of counters covers
  const size_t blocks = (valid_cols + kBlock - 1) / kBlock;
  Counter base = counter;
  for (size_t row = 0; row < valid_rows; ++row) {
    for (size_t block = 0; block < blocks; ++block) {
      for (size_t lane = 0; lane < kLanes; ++lane) {
        const Counter words = Rounds(Advanced(base, lane), key, rounds);
        for (size_t repeat = 0; repeat < kRepeats; ++repeat) {
          const size_t col = block * kBlock + repeat * kLanes + lane;
          if (col < valid_cols) dst[row * row_stride + col] = words[repeat];
        }
      }
      base = Advanced(base, row_stride / kRepeats);
    }
  }
}

}  // namespace pypto::sim
