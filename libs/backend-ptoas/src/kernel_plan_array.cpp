// The Planner's checks of on-core arrays (array.*, `pl.array.create` in a kernel; kernel_planner.h),
// lowered as upstream pypto's PTO emitter writes them (hw-native-sys/pypto e2d0f78ae,
// src/backend/common/pto_ops_memory.cpp; array_ops.cpp here) to stack-local arrays of a PTOAS newer
// than any revision available: pto.declare_local_array / local_array_get / local_array_set.
//
// The IR's arrays are values: update_element gives a new array, and loops and ifs carry them. As
// upstream does, every array an update, a loop or an if derives from one array.create names that
// one storage, written in place (like a carried tile's buffer).
#include <fmt/format.h>

#include <string>

#include "kernel_planner.h"

namespace pypto::backend_ptoas::detail {

Status Planner::CheckArray(const ir::Call& call, const ir::AssignStmt& assign) {
  const std::string& op = call.target_name();
  const ir::Span& span = call.span().known() ? call.span() : assign.span();
  if (op == "array.create") {
    const auto* array = assign.var()->type()->As<ir::ArrayType>();
    if (!array || !IsSignedInteger(array->dtype()))
      return Error(span, fmt::format("backend-ptoas cannot lower the array '{}' {} in kernel '{}': it lowers "
                                     "arrays of signed integers (pto.declare_local_array)",
                                     assign.var()->name_hint(), assign.var()->type()->str(), kernel_.name()));
    plan_.local_arrays.push_back(&assign);
    plan_.array_roots[assign.var().get()] = assign.var().get();
    return {};
  }
  if (auto ok = CheckArrayOperand(call.args()[0], op, span); !ok) return ok;
  if (auto ok = CheckIndexExpr(call.args()[1], fmt::format("the index of '{}'", op), span); !ok) return ok;
  if (op == "array.get_element") {
    scalars_.insert(assign.var().get());
    return {};
  }
  // array.update_element: the value as an integer index value, its result the same storage.
  if (auto ok = CheckIndexExpr(call.args()[2], fmt::format("the value of '{}'", op), span); !ok) return ok;
  return CarryArray(*assign.var(), call.args()[0]->As<ir::Var>(), span);
}

Status Planner::CheckArrayOperand(const ir::ExprPtr& arg, std::string_view op, const ir::Span& span) const {
  const auto* var = arg->As<ir::Var>();
  if (!var || !plan_.array_roots.contains(var))
    return Error(span, fmt::format("the array operand of '{}' is not an array created earlier in kernel '{}'", op,
                                   kernel_.name()));
  return {};
}

// `alias` (a loop's carried array or result, an if's result, an update's result) names the storage
// of `from`.
Status Planner::CarryArray(const ir::Var& alias, const ir::Var* from, const ir::Span& span) {
  auto root = from ? plan_.array_roots.find(from) : plan_.array_roots.end();
  if (root == plan_.array_roots.end())
    return Error(span, fmt::format("the array '{}' carries is not an array created earlier in kernel '{}'",
                                   alias.name_hint(), kernel_.name()));
  plan_.array_roots[&alias] = root->second;
  return {};
}

// A loop's or an if's yield of an array gives back the storage it carries.
Status Planner::CheckArrayYield(const ir::ExprPtr& value, const ir::Var& carried, const ir::Span& span) const {
  if (auto ok = CheckArrayOperand(value, "pl.yield_", span); !ok) return ok;
  if (plan_.array_roots.at(value->As<ir::Var>()) == plan_.array_roots.at(&carried)) return {};
  return Error(span, fmt::format("'{}' and '{}' must be one array to be carried or merged in place",
                                 value->As<ir::Var>()->name_hint(), carried.name_hint()));
}

}  // namespace pypto::backend_ptoas::detail
