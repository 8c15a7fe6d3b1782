// One element of a caller's tensor, read on the host while the task plan is expanded: what
// `pl.tensor.read(t, [i, j])` gives orchestration code (a loop bound, a branch condition, a kernel's
// scalar argument), and what upstream's runtime reads through get_tensor_data.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "pypto/ir/diagnostic.h"
#include "pypto/runtime/chip_tensor.h"

namespace pypto::codegen_orch {

struct ElementValue {
  bool is_float = false;
  int64_t i = 0;  // integers and BOOL (UINT64 beyond INT64's range wraps, as a C++ conversion does)
  double f = 0;   // FP32, FP16, BF16 and FP64 elements
};

// The element of `tensor` at `indices` (one per dimension). An index outside the tensor's shape is an
// error naming `name` and the index, placed at `span`.
ir::Result<ElementValue> ReadElement(const rt::ChipTensor& tensor, std::span<const int64_t> indices,
                                     const std::string& name, const ir::Span& span);

}  // namespace pypto::codegen_orch
