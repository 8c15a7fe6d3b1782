// A tensor axis whose extent is known only when the program runs: the axis of a bare `pl.dynamic`
// dimension in a `@pl.jit` entry compiled once for every extent (docs/language.md, "One compile for
// every extent"). `ir::Shape` stays integers: such an axis holds kDynamicExtent, which no real
// extent equals, and the program reads the extent with `tensor.extent(x, axis=a)`. Kept out of
// type.h so that the places a dynamic axis reaches include it by name.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace pypto::ir {

// Negative, so that a place that has not been taught the case and compares or multiplies extents
// fails a check rather than reading a plausible size.
inline constexpr int64_t kDynamicExtent = -1;

// The spelling of kDynamicExtent in a printed shape (`pl.Tensor[[pl.DYN, 64], pl.FP32]`).
inline constexpr const char* kDynamicExtentName = "pl.DYN";

inline bool HasDynamicExtent(const std::vector<int64_t>& shape) {
  return std::find(shape.begin(), shape.end(), kDynamicExtent) != shape.end();
}

}  // namespace pypto::ir
