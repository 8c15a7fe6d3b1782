#include "block_gather.h"

#include <cstring>

namespace pypto::sim {

std::optional<BadIndex> GatherBlocks(std::byte* dst, const std::byte* src, size_t src_bytes, const std::byte* offsets,
                                     size_t cols, size_t valid_rows, size_t valid_cols) {
  for (size_t r = 0; r < valid_rows; ++r) {
    for (size_t c = 0; c < valid_cols; ++c) {
      const size_t at = r * cols + c;
      uint32_t offset = 0;
      std::memcpy(&offset, offsets + at * sizeof(offset), sizeof(offset));
      if (offset % kGatherBlockBytes != 0 || src_bytes < kGatherBlockBytes || offset > src_bytes - kGatherBlockBytes)
        return BadIndex{offset, at};
      std::memcpy(dst + at * kGatherBlockBytes, src + offset, kGatherBlockBytes);
    }
  }
  return std::nullopt;
}

std::optional<Picked> PickIndex(int32_t index, uint64_t count, GatherOob oob) {
  const uint64_t value = static_cast<uint32_t>(index);
  if (value < count) return Picked{value};
  switch (oob) {
    case GatherOob::Clamp: return Picked{count - 1};
    case GatherOob::Wrap: return Picked{value % count};
    case GatherOob::Zero: return Picked{0, true};
    case GatherOob::Undefined: break;
  }
  return std::nullopt;
}

}  // namespace pypto::sim
