// tensor.* ops of orchestration code: tensors in global memory that the runtime allocates.
#include <fmt/format.h>

#include "op_checks.h"

namespace pypto::ir {
namespace {

using namespace ops;

Result<TypePtr> DeduceCreate(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  auto shape = StaticInts(args[0], "the tensor shape", span);
  if (!shape) return pypto::unexpected(shape.error());
  for (int64_t dim : *shape)
    if (dim <= 0) return TypeError(fmt::format("tensor dimensions must be positive, got {}", ShapeStr(*shape)), span);
  return std::make_shared<TensorType>(*shape, *FindAttr<DataType>(kwargs, "dtype"));
}

// The same elements under another shape: a view of the whole tensor, as the runtime's reshape.
Result<TypePtr> DeduceReshape(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  const auto* tensor = args[0]->type()->As<TensorType>();
  if (!tensor) return TypeError(fmt::format("tensor.reshape reshapes a tensor, got {}", args[0]->type()->str()), span);
  auto shape = StaticInts(args[1], "the new shape", span);
  if (!shape) return pypto::unexpected(shape.error());
  int64_t from = 1, to = 1;
  for (int64_t dim : tensor->shape()) from *= dim;
  for (int64_t dim : *shape) {
    if (dim <= 0) return TypeError(fmt::format("tensor dimensions must be positive, got {}", ShapeStr(*shape)), span);
    to *= dim;
  }
  if (from != to)
    return TypeError(fmt::format("cannot reshape {} to {}: {} elements against {}", tensor->str(), ShapeStr(*shape),
                                 from, to),
                     span);
  return std::make_shared<TensorType>(*shape, tensor->dtype());
}

}  // namespace

void RegisterTensorOps(OpRegistry& registry) {
  registry.Register(OpDef{.name = "tensor.create",
                          .description = "a tensor in global memory allocated by the runtime for one run",
                          .params = {Arg("shape"), Attr("dtype", OpAttrKind::DType)},
                          .deduce_type = DeduceCreate,
                          .affinity = CoreAffinity::Shared});
  registry.Register(OpDef{.name = "tensor.reshape",
                          .description = "a view of a whole tensor under another shape (no data moves)",
                          .params = {Arg("tensor"), Arg("shape")},
                          .deduce_type = DeduceReshape,
                          .affinity = CoreAffinity::Shared,
                          .result_aliases_arg = 0});
}

}  // namespace pypto::ir
