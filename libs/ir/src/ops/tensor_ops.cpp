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

// One element of a tensor, as a scalar of its dtype.
Result<TypePtr> DeduceRead(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  const auto* tensor = args[0]->type()->As<TensorType>();
  if (!tensor) return TypeError(fmt::format("pl.read reads an element of a tensor, got {}", args[0]->type()->str()), span);
  const auto* indices = args[1]->As<TupleLiteral>();
  if (!indices) return TypeError("pl.read takes the element's indices as a list: pl.read(t, [i, j])", span);
  if (indices->elements().size() != tensor->shape().size())
    return TypeError(fmt::format("pl.read of {} needs {} indices, got {}", tensor->str(), tensor->shape().size(),
                                 indices->elements().size()),
                     span);
  for (const auto& index : indices->elements()) {
    const auto* scalar = index->type()->As<ScalarType>();
    if (!scalar || !IsInteger(scalar->dtype()))
      return TypeError(fmt::format("pl.read indices are integers, got {}", index->type()->str()), span);
  }
  return std::make_shared<ScalarType>(tensor->dtype());
}

// pl.dump_tag(t): a statement marking an orchestration tensor for the args dump; it has no value.
Result<TypePtr> DeduceDumpTag(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  if (!args[0]->type()->As<TensorType>())
    return TypeError(fmt::format("pl.dump_tag marks a tensor for the args dump, got {}", args[0]->type()->str()), span);
  return std::make_shared<UnknownType>();
}

}  // namespace

void RegisterTensorOps(OpRegistry& registry) {
  registry.Register(OpDef{.name = "tensor.create",
                          .description = "a tensor in global memory allocated by the runtime for one run",
                          .params = {Arg("shape"), Attr("dtype", OpAttrKind::DType)},
                          .deduce_type = DeduceCreate,
                          .affinity = CoreAffinity::Shared});
  registry.Register(OpDef{.name = "tensor.read",
                          .description = "one element of a tensor in global memory, as a scalar",
                          .params = {Arg("tensor"), Arg("indices")},
                          .deduce_type = DeduceRead,
                          .affinity = CoreAffinity::Shared,
                          .reads_tensor_arg = 0});
  registry.Register(OpDef{.name = "tensor.reshape",
                          .description = "a view of a whole tensor under another shape (no data moves)",
                          .params = {Arg("tensor"), Arg("shape")},
                          .deduce_type = DeduceReshape,
                          .affinity = CoreAffinity::Shared,
                          .result_aliases_arg = 0});
  // No effects: it reads nothing when the program runs; codegen-orch marks the tensor's later submits.
  registry.Register(OpDef{.name = "tensor.dump_tag",
                          .description = "marks a tensor variable for the args dump (RunConfig(enable_dump_args=...))",
                          .params = {Arg("tensor")},
                          .deduce_type = DeduceDumpTag,
                          .affinity = CoreAffinity::Shared});
}

}  // namespace pypto::ir
