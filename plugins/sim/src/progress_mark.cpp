#include "progress_mark.h"

#include <algorithm>
#include <cstring>

#include "pypto/runtime/chip_tensor.h"

namespace pypto::sim {

uint64_t DigestBytes(uint64_t hash, const std::byte* data, uint64_t bytes) {
  constexpr uint64_t kPrime = 0x100000001b3ull;
  uint64_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t word;
    std::memcpy(&word, data + i, 8);
    hash = (hash ^ word) * kPrime;
  }
  for (; i < bytes; ++i) hash = (hash ^ static_cast<uint64_t>(data[i])) * kPrime;
  return hash;
}

uint64_t ProgressMark(const DecodedKernel& kernel, const int64_t* args, const CoreMemory& memory,
                      uint64_t peer_waits) {
  uint64_t hash = 0xcbf29ce484222325ull ^ peer_waits;
  uint64_t budget = kMaxTensorBytes;
  for (uint32_t slot = 0; slot < kernel.tensor_count && budget > 0; ++slot) {
    const auto* tensor = reinterpret_cast<const rt::ChipTensor*>(args[slot]);
    if (!tensor) continue;
    const rt::ByteRange view = rt::ViewBytes(*tensor);
    if (view.empty()) continue;
    const uint64_t bytes = std::min(budget, view.last - view.first);
    hash = DigestBytes(hash, reinterpret_cast<const std::byte*>(view.first), bytes);
    budget -= bytes;
  }
  return memory.Digest(hash);
}

}  // namespace pypto::sim
