// scalar.* ops: conversions of one scalar value (`pl.cast(k, pl.INDEX)` on a scalar).
#include <fmt/format.h>

#include "op_checks.h"

namespace pypto::ir {
namespace {

using namespace ops;

// A scalar as another dtype (upstream's unified pl.cast given a scalar): between integer dtypes,
// from a BOOL (a comparison's 0 or 1) to an integer, and between an integer (not INDEX) and FP32, an
// FP32 rounding toward zero as MLIR's fptosi does.
Result<TypePtr> DeduceScalarCast(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  const auto* scalar = args[0]->type()->As<ScalarType>();
  const DataType to = *FindAttr<DataType>(kwargs, "target_type");
  const auto convertible = [](DataType a, DataType b) {
    if (a == b || (IsInteger(a) && IsInteger(b)) || (a == DataType::BOOL && IsInteger(b))) return true;
    const bool fp_int = (a == DataType::FP32 && IsInteger(b)) || (IsInteger(a) && b == DataType::FP32);
    return fp_int && a != DataType::INDEX && b != DataType::INDEX;
  };
  if (!scalar || !convertible(scalar->dtype(), to)) {
    return TypeError(fmt::format("a scalar cast converts between integer dtypes, from BOOL to an integer, or between "
                                 "an integer and FP32; "
                                 "got {} to {}",
                                 args[0]->type()->str(), DataTypeName(to)),
                     span, to == DataType::INDEX || (scalar && scalar->dtype() == DataType::INDEX)
                               ? "cast through INT64: pl.cast(pl.cast(x, pl.INT64), ...)"
                               : "");
  }
  return std::make_shared<ScalarType>(to);
}

}  // namespace

void RegisterScalarOps(OpRegistry& registry) {
  registry.Register(OpDef{.name = "scalar.cast",
                          .description = "a scalar as another integer dtype, a BOOL as an integer, or between an "
                                         "integer and FP32",
                          .params = {Arg("value"), Attr("target_type", OpAttrKind::DType),
                                     OptionalAttr("mode", OpAttrKind::String)},
                          .deduce_type = DeduceScalarCast,
                          .affinity = CoreAffinity::Shared});
}

}  // namespace pypto::ir
