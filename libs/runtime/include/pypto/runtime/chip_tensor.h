// The tensor descriptor every kernel sees (one definition, shared with the C ABI).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "pypto-c/runtime.h"

namespace pypto::rt {

using ChipTensor = pypto_chip_tensor;
using TaskId = uint64_t;
inline constexpr TaskId kInvalidTaskId = PYPTO_INVALID_TASK_ID;

static_assert(sizeof(ChipTensor) == 128, "ChipTensor must be exactly two cache lines");
static_assert(offsetof(ChipTensor, start_offset) == 24 && offsetof(ChipTensor, ndims) == 36 &&
                  offsetof(ChipTensor, dtype) == 40 && offsetof(ChipTensor, shapes) == 44 &&
                  offsetof(ChipTensor, extent_elem_cache) == 64 && offsetof(ChipTensor, strides) == 72,
              "ChipTensor layout must match upstream's");

size_t ElementSize(uint8_t dtype);
// "FLOAT32", "BFLOAT16", ... as upstream spells the runtime dtypes; "UNKNOWN" for other codes.
const char* DtypeName(uint8_t dtype);

// Sets `count` elements of `element_size` bytes at `data` to the low bytes of `bits` (a tensor's
// starting value, pl.create_tensor(..., init_value=v)).
void FillElements(void* data, uint64_t count, size_t element_size, uint64_t bits);

// A contiguous row-major descriptor over caller-owned memory (no owner task). Throws
// std::invalid_argument for a rank outside 1..5 or an unknown dtype.
ChipTensor MakeExternalTensor(void* data, std::span<const uint32_t> shape, uint8_t dtype);

// The same elements as the contiguous `tensor` under another shape (the runtime's reshape). Throws
// std::invalid_argument for a non-contiguous tensor, a rank outside 1..5 or another element count.
ChipTensor ReshapedTensor(const ChipTensor& tensor, std::span<const uint32_t> shape);

// Whether the window [offset, offset + size) of dimension `d` lies in a dimension of `extent`. As on
// the device, a window may run past the end of dimension 0 (a block table's last n_unroll entries, of
// which kernels read only those that exist): what lies beyond is past the tensor's buffer, which
// kernels' accesses are checked against instead.
constexpr bool WindowFits(uint32_t d, uint64_t offset, uint64_t size, uint64_t extent) {
  return (d == 0 ? offset + 1 : offset + size) <= extent;
}

// The window [offsets, offsets + shape) of `tensor`, with its strides (the runtime's view()). Throws
// std::invalid_argument for another rank or a window outside the tensor (WindowFits).
ChipTensor SlicedTensor(const ChipTensor& tensor, std::span<const uint32_t> shape, std::span<const uint32_t> offsets);

// The same elements with axes `axis1` and `axis2` swapped, shapes and strides both (the runtime's
// transpose(); no data moves). Throws std::invalid_argument for an axis outside the tensor's rank.
ChipTensor TransposedTensor(const ChipTensor& tensor, uint32_t axis1, uint32_t axis2);

// Byte range [first, last) the view can touch, as addresses (buffer_addr included), for overlap-based
// dependency tracking and bounds checks. An empty view gives an empty range.
struct ByteRange {
  uint64_t first = 0;
  uint64_t last = 0;
  bool empty() const { return first >= last; }
  // An empty range overlaps nothing, not even a range around it.
  bool overlaps(const ByteRange& other) const {
    return !empty() && !other.empty() && first < other.last && other.first < last;
  }
};
ByteRange ViewBytes(const ChipTensor& tensor);

// Typed pointer to the view's first element.
template <typename T>
T* DataPointer(const ChipTensor& tensor) {
  return reinterpret_cast<T*>(tensor.buffer_addr) + tensor.start_offset;
}

}  // namespace pypto::rt
