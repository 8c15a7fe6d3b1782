// Task arguments. Mistakes are latched rather than thrown, as upstream's Arg does: an orchestration
// keeps building its task, and the submit refuses it with InvalidArgs naming the first mistake.
#include "pypto/runtime/task_args.h"

#include <fmt/format.h>

namespace pypto::rt {

const char* ArgDirectionName(ArgDirection direction) {
  switch (direction) {
    case ArgDirection::Input: return "Input";
    case ArgDirection::Output: return "Output";
    case ArgDirection::InOut: return "InOut";
    case ArgDirection::OutputExisting: return "OutputExisting";
    case ArgDirection::NoDep: return "NoDep";
    case ArgDirection::Scalar: return "Scalar";
  }
  return "Unknown";
}

namespace {

// The first problem with a tensor descriptor, or "" when the runtime can track and pass it.
std::string CheckDescriptor(const ChipTensor& tensor) {
  if (tensor.ndims < 1 || tensor.ndims > PYPTO_MAX_TENSOR_DIMS)
    return fmt::format("has rank {}, expected 1..{}", tensor.ndims, PYPTO_MAX_TENSOR_DIMS);
  if (ElementSize(tensor.dtype) == 0) return fmt::format("has unknown dtype {}", tensor.dtype);
  return {};
}

}  // namespace

void TaskArgs::AddTensor(const ChipTensor& tensor, ArgDirection direction) {
  if (has_error()) return;
  if (!scalars_.empty()) {
    error_ = "tensor argument added after a scalar: all tensors must come first";
  } else if (tensors_.size() >= kMaxTensors) {
    error_ = fmt::format("too many tensor arguments (at most {})", kMaxTensors);
  } else if (direction == ArgDirection::Scalar) {
    error_ = fmt::format("tensor argument {} has direction Scalar", tensors_.size());
  } else if (std::string problem = CheckDescriptor(tensor); !problem.empty()) {
    error_ = fmt::format("tensor argument {} {}", tensors_.size(), problem);
  } else {
    tensors_.push_back(TensorArg{tensor, direction});
  }
}

void TaskArgs::add_scalar(uint64_t bits) {
  if (has_error()) return;
  if (scalars_.size() >= kMaxScalars) {
    error_ = fmt::format("too many scalar arguments (at most {})", kMaxScalars);
    return;
  }
  scalars_.push_back(bits);
}

void TaskArgs::mark_dump(size_t index) {
  if (has_error()) return;
  if (index >= tensors_.size()) {
    error_ = fmt::format("dump: tensor argument {} does not exist ({} added)", index, tensors_.size());
    return;
  }
  tensors_[index].dump = true;
}

void TaskArgs::set_dependencies(const TaskId* ids, size_t count) {
  if (has_error()) return;
  if (!ids && count > 0) {
    error_ = fmt::format("set_dependencies: {} dependencies from a null array", count);
    return;
  }
  dependencies_.assign(ids, ids + count);
}

}  // namespace pypto::rt
