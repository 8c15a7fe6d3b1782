// Kernels of the gathers that move runs of bytes: pto.tgatherb's 32-byte blocks of a tile picked by
// byte offsets, and how pto.mgather resolves an index into the rows or elements of global memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "index_moves.h"

namespace pypto::sim {

inline constexpr size_t kGatherBlockBytes = 32;

// Block c of row r of dst (rows of `cols` 32-byte blocks) = the 32 bytes of src (src_bytes long)
// from byte offsets[r * cols + c] (UINT32), for r < valid_rows and c < valid_cols; the rest of dst is left as
// it is. Stops at the first offset that is not the start of a 32-byte block inside src, returning
// it and its position (r * cols + c).
std::optional<BadIndex> GatherBlocks(std::byte* dst, const std::byte* src, size_t src_bytes, const std::byte* offsets,
                                     size_t cols, size_t valid_rows, size_t valid_cols);

// What mgather reads for an index past the end of the `count` rows or elements it picks from
// (upstream's gather_oob, in its order).
enum class GatherOob : uint8_t { Undefined, Clamp, Wrap, Zero };

// The row or element an INT32 index picks, the index read as an unsigned 32-bit value (so -1 is past
// any end). `zero`: the destination gets zeros (GatherOob::Zero past the end); nullopt: the index is
// past the end and nothing defines what it reads (GatherOob::Undefined).
struct Picked {
  uint64_t at = 0;
  bool zero = false;
};
std::optional<Picked> PickIndex(int32_t index, uint64_t count, GatherOob oob);

}  // namespace pypto::sim
