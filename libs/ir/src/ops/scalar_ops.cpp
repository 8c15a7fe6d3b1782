// scalar.* ops: conversions of one scalar value (`pl.cast(k, pl.INDEX)` on a scalar).
#include <fmt/format.h>

#include "op_checks.h"

namespace pypto::ir {
namespace {

using namespace ops;

// An integer scalar as another integer dtype (upstream's unified pl.cast given a scalar). Index
// arithmetic is all the kernels' scalars do so far, so both sides are integers.
Result<TypePtr> DeduceScalarCast(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  const auto* scalar = args[0]->type()->As<ScalarType>();
  const DataType to = *FindAttr<DataType>(kwargs, "target_type");
  if (!scalar || !IsInteger(scalar->dtype()) || !IsInteger(to)) {
    return TypeError(fmt::format("a scalar cast converts between integer dtypes so far, got {} to {}",
                                 args[0]->type()->str(), DataTypeName(to)),
                     span);
  }
  return std::make_shared<ScalarType>(to);
}

}  // namespace

void RegisterScalarOps(OpRegistry& registry) {
  registry.Register(OpDef{.name = "scalar.cast",
                          .description = "an integer scalar as another integer dtype",
                          .params = {Arg("value"), Attr("target_type", OpAttrKind::DType),
                                     OptionalAttr("mode", OpAttrKind::String)},
                          .deduce_type = DeduceScalarCast,
                          .affinity = CoreAffinity::Shared});
}

}  // namespace pypto::ir
