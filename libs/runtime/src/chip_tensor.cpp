// The tensor descriptor: element sizes, external tensors and the byte range a view can touch.
#include "pypto/runtime/chip_tensor.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace pypto::rt {

namespace {

struct DtypeInfo {
  const char* name;
  size_t size;
};

// Indexed by pypto_rt_dtype. FP4E2M1 counts one byte per element because tensors of it hold packed
// pairs (torch's float4_e2m1fn_x2): the shape counts bytes, as the caller's tensor does.
constexpr std::array<DtypeInfo, 15> kDtypes = {{
    {"FLOAT32", 4},
    {"FLOAT16", 2},
    {"INT32", 4},
    {"INT16", 2},
    {"INT8", 1},
    {"UINT8", 1},
    {"BFLOAT16", 2},
    {"INT64", 8},
    {"UINT64", 8},
    {"UINT16", 2},
    {"UINT32", 4},
    {"BOOL", 1},
    {"FP8E4M3FN", 1},
    {"FP8E8M0", 1},
    {"FP4E2M1", 1},
}};

}  // namespace

size_t ElementSize(uint8_t dtype) { return dtype < kDtypes.size() ? kDtypes[dtype].size : 0; }

void FillElements(void* data, uint64_t count, size_t element_size, uint64_t bits) {
  auto* bytes = static_cast<std::byte*>(data);
  for (uint64_t i = 0; i < count; ++i) std::memcpy(bytes + i * element_size, &bits, element_size);  // little-endian
}

const char* DtypeName(uint8_t dtype) { return dtype < kDtypes.size() ? kDtypes[dtype].name : "UNKNOWN"; }

// Throws std::invalid_argument for a rank outside 1..5 or an unknown dtype; the C API checks both
// first so that its callers get a status instead.
ChipTensor MakeExternalTensor(void* data, std::span<const uint32_t> shape, uint8_t dtype) {
  if (shape.empty() || shape.size() > PYPTO_MAX_TENSOR_DIMS)
    throw std::invalid_argument("MakeExternalTensor: rank " + std::to_string(shape.size()) + " is not in 1..5");
  const size_t element_size = ElementSize(dtype);
  if (element_size == 0)
    throw std::invalid_argument("MakeExternalTensor: unknown dtype " + std::to_string(dtype));

  ChipTensor tensor{};
  tensor.buffer_addr = reinterpret_cast<uint64_t>(data);
  tensor.owner_task_id = kInvalidTaskId;
  tensor.ndims = static_cast<uint32_t>(shape.size());
  tensor.dtype = dtype;
  tensor.is_contiguous = 1;

  // Row-major strides. An empty dimension still gets stride >= 1 because the descriptor promises
  // positive strides; such a tensor has no elements, so the value is never used to address memory.
  uint64_t stride = 1;
  uint64_t elements = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    tensor.shapes[d] = shape[d];
    tensor.strides[d] = static_cast<uint32_t>(stride);
    stride *= shape[d] > 0 ? shape[d] : 1;
    elements *= shape[d];
  }
  tensor.extent_elem_cache = elements;  // for a contiguous view, 1 + sum((shape-1)*stride) == numel
  tensor.buffer_size = elements * element_size;
  return tensor;
}

namespace {

// Sets row-major shapes and strides for `shape`; returns the element count.
uint64_t SetRowMajor(ChipTensor& tensor, std::span<const uint32_t> shape) {
  tensor.ndims = static_cast<uint32_t>(shape.size());
  uint64_t stride = 1, elements = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    tensor.shapes[d] = shape[d];
    tensor.strides[d] = static_cast<uint32_t>(stride);
    stride *= shape[d] > 0 ? shape[d] : 1;
    elements *= shape[d];
  }
  for (size_t d = shape.size(); d < PYPTO_MAX_TENSOR_DIMS; ++d) tensor.shapes[d] = tensor.strides[d] = 0;
  return elements;
}

bool IsRowMajor(const ChipTensor& tensor) {
  uint64_t stride = 1;
  for (uint32_t d = tensor.ndims; d-- > 0;) {
    if (tensor.shapes[d] > 1 && tensor.strides[d] != stride) return false;
    stride *= tensor.shapes[d] > 0 ? tensor.shapes[d] : 1;
  }
  return true;
}

constexpr uint32_t kUnknownExtent = std::numeric_limits<uint32_t>::max();

// `shape` with its axis of kUnknownExtent (a plan's reshape to a dimension known when the program runs,
// in a program compiled once for every extent) given the extent that `elements` leave for it, as
// torch's -1; where the tensor's own extent is unknown too (a plan described before it runs), the
// axis stays unknown.
std::vector<uint32_t> ResolvedShape(std::span<const uint32_t> shape, uint64_t elements, bool known) {
  std::vector<uint32_t> resolved(shape.begin(), shape.end());
  auto unknown = std::ranges::find(resolved, kUnknownExtent);
  if (unknown == resolved.end() || !known) return resolved;
  uint64_t others = 1;
  for (auto it = resolved.begin(); it != resolved.end(); ++it)
    if (it != unknown) others *= *it;
  if (others == 0 || elements % others != 0 || elements / others >= kUnknownExtent)
    throw std::invalid_argument("ReshapedTensor: " + std::to_string(elements) +
                                " elements do not divide into rows of " + std::to_string(others));
  *unknown = static_cast<uint32_t>(elements / others);
  return resolved;
}

}  // namespace

ChipTensor ReshapedTensor(const ChipTensor& tensor, std::span<const uint32_t> new_shape) {
  if (new_shape.empty() || new_shape.size() > PYPTO_MAX_TENSOR_DIMS)
    throw std::invalid_argument("ReshapedTensor: rank " + std::to_string(new_shape.size()) + " is not in 1..5");
  if (tensor.ndims == 0 || tensor.ndims > PYPTO_MAX_TENSOR_DIMS || !IsRowMajor(tensor))
    throw std::invalid_argument("ReshapedTensor: only a contiguous tensor can be reshaped");
  uint64_t before = 1;
  bool known = true;
  for (uint32_t d = 0; d < tensor.ndims; ++d) {
    before *= tensor.shapes[d];
    known &= tensor.shapes[d] != kUnknownExtent;
  }
  const std::vector<uint32_t> shape = ResolvedShape(new_shape, before, known);
  ChipTensor reshaped = tensor;
  const uint64_t after = SetRowMajor(reshaped, shape);
  if (known && after != before)
    throw std::invalid_argument("ReshapedTensor: " + std::to_string(before) + " elements cannot take a shape of " +
                                std::to_string(after));
  reshaped.is_contiguous = 1;
  reshaped.extent_elem_cache = after;
  return reshaped;
}

ChipTensor SlicedTensor(const ChipTensor& tensor, std::span<const uint32_t> shape,
                        std::span<const uint32_t> offsets) {
  if (shape.size() != tensor.ndims || offsets.size() != tensor.ndims)
    throw std::invalid_argument("SlicedTensor: a slice of a rank-" + std::to_string(tensor.ndims) + " tensor needs " +
                                std::to_string(tensor.ndims) + " sizes and offsets");
  ChipTensor sliced = tensor;
  uint64_t elements = 1;
  for (uint32_t d = 0; d < tensor.ndims; ++d) {
    if (!WindowFits(d, offsets[d], shape[d], tensor.shapes[d]))
      throw std::invalid_argument("SlicedTensor: the window [" + std::to_string(offsets[d]) + ", " +
                                  std::to_string(uint64_t{offsets[d]} + shape[d]) + ") of dimension " +
                                  std::to_string(d) + " is outside its extent " + std::to_string(tensor.shapes[d]));
    sliced.start_offset += uint64_t{offsets[d]} * tensor.strides[d];
    sliced.shapes[d] = shape[d];
    elements *= shape[d];
  }
  sliced.is_contiguous = IsRowMajor(sliced) ? 1 : 0;
  sliced.extent_elem_cache = elements;
  return sliced;
}

ChipTensor TransposedTensor(const ChipTensor& tensor, uint32_t axis1, uint32_t axis2) {
  if (axis1 >= tensor.ndims || axis2 >= tensor.ndims)
    throw std::invalid_argument("TransposedTensor: axes " + std::to_string(axis1) + " and " + std::to_string(axis2) +
                                " of a rank-" + std::to_string(tensor.ndims) + " tensor");
  ChipTensor transposed = tensor;
  std::swap(transposed.shapes[axis1], transposed.shapes[axis2]);
  std::swap(transposed.strides[axis1], transposed.strides[axis2]);
  transposed.is_contiguous = IsRowMajor(transposed) ? 1 : 0;
  return transposed;
}

ByteRange ViewBytes(const ChipTensor& tensor) {
  const uint64_t element_size = ElementSize(tensor.dtype);
  const uint32_t ndims = tensor.ndims < PYPTO_MAX_TENSOR_DIMS ? tensor.ndims : PYPTO_MAX_TENSOR_DIMS;
  // Elements from the view origin to one past the furthest reachable element.
  uint64_t extent = 1;
  for (uint32_t d = 0; d < ndims; ++d) {
    if (tensor.shapes[d] == 0) {
      extent = 0;  // an empty view touches nothing
      break;
    }
    extent += uint64_t{tensor.shapes[d] - 1} * tensor.strides[d];
  }
  const uint64_t first = tensor.buffer_addr + tensor.start_offset * element_size;
  return ByteRange{first, first + extent * element_size};
}

}  // namespace pypto::rt
