// How a split cross-core pipe (PipeSplit::UpDown / LeftRight) cuts the cube side's tile into the
// halves of the two AIV lanes, and puts lane halves back together. Tiles are row-major matrices of
// `rows` x `cols` elements, all of one size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

#include "pypto/runtime/runtime.h"

namespace pypto::rt {

// The box of one lane's half of a rows x cols tile: the cut extent halved, rounded up.
std::pair<int64_t, int64_t> LaneBox(PipeSplit split, int64_t rows, int64_t cols);

// Copies lane `lane`'s half of `whole` (rows x cols) into `half`, its box; the cells of the box the
// tile does not reach (lane 1 of an odd extent) are zeroed.
void CopyLaneHalfOut(PipeSplit split, int lane, std::span<const std::byte> whole, int64_t rows, int64_t cols,
                     std::span<std::byte> half);

// Copies `half`, lane `lane`'s box, into its place in `whole` (rows x cols).
void CopyLaneHalfIn(PipeSplit split, int lane, std::span<const std::byte> half, std::span<std::byte> whole,
                    int64_t rows, int64_t cols);

}  // namespace pypto::rt
