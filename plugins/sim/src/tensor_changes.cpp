#include "tensor_changes.h"

#include <algorithm>
#include <cstring>

namespace pypto::sim {
namespace {

const rt::ChipTensor& TensorAt(const int64_t* args, uint32_t slot) {
  return *reinterpret_cast<const rt::ChipTensor*>(args[slot]);
}

}  // namespace

TensorBytes SnapshotTensors(const DecodedKernel& kernel, const int64_t* args) {
  TensorBytes copies(kernel.tensor_count);
  for (uint32_t slot = 0; slot < kernel.tensor_count; ++slot) {
    const rt::ByteRange bytes = rt::ViewBytes(TensorAt(args, slot));
    if (bytes.empty()) continue;
    const auto* data = reinterpret_cast<const uint8_t*>(bytes.first);
    copies[slot].assign(data, data + (bytes.last - bytes.first));
  }
  return copies;
}

TensorChanges ChangedTensors(const DecodedKernel& kernel, const int64_t* args, const TensorBytes& before) {
  TensorChanges writes(kernel.tensor_count);
  for (uint32_t slot = 0; slot < kernel.tensor_count; ++slot) {
    const rt::ByteRange bytes = rt::ViewBytes(TensorAt(args, slot));
    const auto* now = reinterpret_cast<const uint8_t*>(bytes.first);
    const auto& then = before[slot];
    // Whole elements: a float rewritten with another value may keep some of its bytes.
    const uint64_t element = std::max<uint64_t>(1, rt::ElementSize(TensorAt(args, slot).dtype));
    auto differs = [&](uint64_t at) {
      return std::memcmp(now + at, then.data() + at, std::min<uint64_t>(element, then.size() - at)) != 0;
    };
    for (uint64_t i = 0; i < then.size();) {
      if (!differs(i)) {
        i += element;
        continue;
      }
      const uint64_t start = i;
      while (i < then.size() && differs(i)) i += element;
      writes[slot].push_back({bytes.first + start, bytes.first + std::min<uint64_t>(i, then.size())});
    }
  }
  return writes;
}

uint64_t TensorViewBytes(const DecodedKernel& kernel, const int64_t* args) {
  uint64_t total = 0;
  for (uint32_t slot = 0; slot < kernel.tensor_count; ++slot) {
    const rt::ByteRange bytes = rt::ViewBytes(TensorAt(args, slot));
    if (!bytes.empty()) total += bytes.last - bytes.first;
  }
  return total;
}

}  // namespace pypto::sim
