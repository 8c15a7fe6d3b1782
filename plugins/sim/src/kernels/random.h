// The counter-based generator of pto.trandom, as pto-isa's CPU model defines it: Philox-style
// rounds over a 128-bit counter and a 64-bit key. Each row of the tile draws from a run of
// counters: 64 lanes, each lane's counter giving 4 words for 4 columns 64 apart, then the counter
// advances by a quarter of the row stride for the next 256 columns.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace pypto::sim {

// Fills the [valid_rows, valid_cols] region of a row-major tile of 32-bit words whose rows are
// `row_stride` words apart; rounds is 7 or 10.
void RandomTile(uint32_t* dst, size_t row_stride, size_t valid_rows, size_t valid_cols,
                const std::array<uint32_t, 2>& key, const std::array<uint32_t, 4>& counter, int rounds);

}  // namespace pypto::sim
