// The Planner's checks of index expressions (kernel_planner.h): offsets, loop bounds and other values
// computed in `index` from constants, loop variables, index scalars and integer scalar parameters.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "kernel_planner.h"
#include "pypto/ir/printer.h"

namespace pypto::backend_ptoas::detail {

// Offsets may be computed at run time from loop variables and scalar parameters.
Status Planner::CheckOffsets(const ir::ExprPtr& arg, std::string_view op, const ir::Span& span) {
  const auto* tuple = arg->As<ir::TupleLiteral>();
  if (!tuple) return Error(span, fmt::format("the offsets of '{}' must be a list of integers", op));
  std::string what = fmt::format("an offset of '{}'", op);
  for (const auto& element : tuple->elements()) {
    if (auto ok = CheckIndexExpr(element, what, span); !ok) return ok;
  }
  return {};
}

// An `index` value: integer constants, enclosing loop variables and signed integer scalar
// parameters, combined by + - * // % min max << >>, pl.cast of one to a signed integer type
// (`c < pl.cast(4096, pl.INT32)`) and integer element reads (`if pl.read(mask, [t, b]) > 0:`).
// Comparisons and float division give no index.
Status Planner::CheckIndexExpr(const ir::ExprPtr& expr, const std::string& what, const ir::Span& span) {
  if (expr->Is<ir::ConstInt>()) return {};
  if (const auto* var = expr->As<ir::Var>()) return CheckIndexVar(*var, what, span);
  if (const auto* call = expr->As<ir::Call>();
      call && call->is_op_call() && call->target_name() == "scalar.cast" && IsIndexScalarExpr(*call) &&
      IsIndexScalarExpr(*call->args()[0]))
    return CheckIndexExpr(call->args()[0], what, span);
  if (IsElementRead(*expr) && IsIndexScalarExpr(*expr)) return CheckElementRead(*expr->As<ir::Call>(), span);
  if (const auto* binary = expr->As<ir::BinaryExpr>()) {
    const char* symbol = ir::BinaryOpSymbol(binary->op());
    if (ir::IsComparison(binary->op())) {
      return Error(span, fmt::format("{} uses the comparison '{}', whose result is a boolean; backend-ptoas "
                                     "lowers only + - * // % min max << >> of integers there",
                                     what, symbol));
    }
    const auto* scalar = binary->type()->As<ir::ScalarType>();
    if (binary->op() == ir::BinaryOp::FloatDiv || !scalar || !ir::IsInteger(scalar->dtype())) {
      return Error(span, fmt::format("{} uses '{}' with a non-integer result; use '//' for integer division", what,
                                     symbol));
    }
    if (auto ok = CheckIndexExpr(binary->lhs(), what, span); !ok) return ok;
    return CheckIndexExpr(binary->rhs(), what, span);
  }
  return Error(span, fmt::format("{} must be an integer expression of constants, loop variables and scalar "
                                 "parameters",
                                 what));
}

// A comparison the kernel computes: of two index values (arith.cmpi), or of floating-point scalar
// operands (arith.cmpf): element reads (named, or read where they stand at the compared type),
// casts, scalar parameters and literals, at the type ComparedFloatType names.
Status Planner::CheckComparison(const ir::BinaryExpr& compare, const std::string& what, const ir::Span& span) {
  if (const auto dtype = ComparedFloatType(compare)) {
    for (const auto& operand : {compare.lhs(), compare.rhs()}) {
      if (IsElementRead(*operand) && operand->type()->As<ir::ScalarType>()->dtype() == *dtype) {
        if (auto ok = CheckElementRead(*operand->As<ir::Call>(), span); !ok) return ok;
        continue;
      }
      const auto* var = operand->As<ir::Var>();
      const bool float_value = var && (plan_.float_scalars.contains(var) || IsScalarParam(*var));
      if (!operand->Is<ir::ConstFloat>() && !operand->Is<ir::ConstInt>() && !float_value)
        return Error(span, fmt::format("{} compares `{}`, which is not a floating-point element read (pl.read), "
                                       "cast (pl.cast), scalar parameter or literal of kernel '{}'",
                                       what, ir::PrintExpr(operand), kernel_.name()));
      if (auto ok = CheckScalarOperand(operand, *dtype, what, span); !ok) return ok;
    }
    return {};
  }
  if (auto ok = CheckIndexExpr(compare.lhs(), what, span); !ok) return ok;
  return CheckIndexExpr(compare.rhs(), what, span);
}

bool Planner::IsScalarParam(const ir::Var& var) const {
  return std::any_of(plan_.scalar_params.begin(), plan_.scalar_params.end(),
                     [&](const ir::VarPtr& param) { return param.get() == &var; });
}

Status Planner::CheckIndexVar(const ir::Var& var, const std::string& what, const ir::Span& span) {
  if (std::find(loops_.begin(), loops_.end(), &var) != loops_.end() || scalars_.contains(&var)) return {};
  bool is_param = std::any_of(plan_.scalar_params.begin(), plan_.scalar_params.end(),
                              [&](const ir::VarPtr& param) { return param.get() == &var; });
  if (!is_param) {
    return Error(span, fmt::format("{} reads '{}', which is neither an enclosing loop variable nor a scalar "
                                   "parameter of kernel '{}'",
                                   what, var.name_hint(), kernel_.name()));
  }
  // arith.index_cast takes signless integers; unsigned parameters are typed ui8..ui64 in the module.
  auto dtype = var.type()->As<ir::ScalarType>()->dtype();
  if (dtype != ir::DataType::INDEX && !IsSignedInteger(dtype)) {
    return Error(span, fmt::format("{} reads the {} parameter '{}'; backend-ptoas computes offsets and loop "
                                   "bounds only from signed integer or INDEX scalars",
                                   what, ir::DataTypeName(dtype), var.name_hint()));
  }
  used_.insert(&var);
  return {};
}

}  // namespace pypto::backend_ptoas::detail
