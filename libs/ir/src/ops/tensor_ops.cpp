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

}  // namespace

void RegisterTensorOps(OpRegistry& registry) {
  registry.Register(OpDef{.name = "tensor.create",
                          .description = "a tensor in global memory allocated by the runtime for one run",
                          .params = {Arg("shape"), Attr("dtype", OpAttrKind::DType)},
                          .deduce_type = DeduceCreate,
                          .affinity = CoreAffinity::Shared});
}

}  // namespace pypto::ir
