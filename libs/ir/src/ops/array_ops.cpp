// array.* ops of orchestration code: a fixed number of scalars, in practice the TaskIds of a loop's
// launches that one later `deps=[tids]` waits for. Updates are functional (a new array value, as a
// tensor assemble is), so a loop carries the array like any other value.
#include <fmt/format.h>

#include "op_checks.h"

namespace pypto::ir {
namespace {

using namespace ops;

// Arrays hold what orchestration code computes with: integers, BOOL, and TaskIds.
bool ArrayElementDtype(DataType dtype) {
  return dtype == DataType::TASK_ID || dtype == DataType::BOOL || IsInteger(dtype);
}

Result<const ArrayType*> ExpectArray(const ExprPtr& expr, const std::string& op, const Span& span) {
  const auto* array = expr->type()->As<ArrayType>();
  if (!array) return TypeError(fmt::format("{} takes an array first, got {}", op, expr->type()->str()), span);
  return array;
}

Result<bool> ExpectIndex(const ExprPtr& index, const ArrayType& array, const std::string& op, const Span& span) {
  const auto* scalar = index->type()->As<ScalarType>();
  if (!scalar || !IsInteger(scalar->dtype()))
    return TypeError(fmt::format("the index of {} must be an integer, got {}", op, index->type()->str()), span);
  if (auto constant = AsConstInt(index); constant && (*constant < 0 || *constant >= array.extent()))
    return TypeError(fmt::format("index {} is out of range for {}", *constant, array.str()), span);
  return true;
}

// pl.array.create(n, dtype=pl.TASK_ID): n elements, n a positive constant.
Result<TypePtr> DeduceCreate(const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs, const Span& span) {
  const auto extent = AsConstInt(args[0]);
  if (!extent || *extent <= 0)
    return TypeError(fmt::format("pl.array.create takes a positive integer constant extent, got {}",
                                 args[0]->type()->str()),
                     span);
  const DataType dtype = *FindAttr<DataType>(kwargs, "dtype");
  if (!ArrayElementDtype(dtype))
    return TypeError(fmt::format("arrays hold integers, BOOL or TaskIds, not {}", DataTypeName(dtype)), span,
                     "use pl.TASK_ID for the TaskIds of launches");
  return std::make_shared<ArrayType>(dtype, *extent);
}

Result<TypePtr> DeduceGetElement(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  auto array = ExpectArray(args[0], "pl.array.get_element", span);
  if (!array) return pypto::unexpected(array.error());
  if (auto ok = ExpectIndex(args[1], **array, "pl.array.get_element", span); !ok) return pypto::unexpected(ok.error());
  return std::make_shared<ScalarType>((*array)->dtype());
}

Result<TypePtr> DeduceUpdateElement(const std::vector<ExprPtr>& args, const Call::Kwargs&, const Span& span) {
  auto array = ExpectArray(args[0], "pl.array.update_element", span);
  if (!array) return pypto::unexpected(array.error());
  if (auto ok = ExpectIndex(args[1], **array, "pl.array.update_element", span); !ok)
    return pypto::unexpected(ok.error());
  const auto* value = args[2]->type()->As<ScalarType>();
  const DataType dtype = (*array)->dtype();
  const bool fits = value && (value->dtype() == dtype ||
                              (dtype != DataType::TASK_ID && value->dtype() != DataType::TASK_ID &&
                               IsInteger(value->dtype())));
  if (!fits)
    return TypeError(fmt::format("{} holds pl.{} elements, got {}", (*array)->str(), DataTypeName(dtype),
                                 args[2]->type()->str()),
                     args[2]->span().known() ? args[2]->span() : span);
  return args[0]->type();
}

}  // namespace

void RegisterArrayOps(OpRegistry& registry) {
  registry.Register(OpDef{.name = "array.create",
                          .description = "a fixed-length array of orchestration scalars (TaskIds)",
                          .params = {Arg("extent"), Attr("dtype", OpAttrKind::DType)},
                          .deduce_type = DeduceCreate,
                          .affinity = CoreAffinity::Shared});
  registry.Register(OpDef{.name = "array.get_element",
                          .description = "one element of an array",
                          .params = {Arg("array"), Arg("index")},
                          .deduce_type = DeduceGetElement,
                          .affinity = CoreAffinity::Shared});
  registry.Register(OpDef{.name = "array.update_element",
                          .description = "the array with one element replaced",
                          .params = {Arg("array"), Arg("index"), Arg("value")},
                          .deduce_type = DeduceUpdateElement,
                          .affinity = CoreAffinity::Shared});
}

}  // namespace pypto::ir
