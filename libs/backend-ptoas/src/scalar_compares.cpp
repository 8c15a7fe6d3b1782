// Comparisons of floating-point scalars (`if m == best:`, `if pl.read(t, [0, c]) == best:`), and
// the integers a kernel makes of a boolean or of a floating-point scalar (`pl.cast(a == a,
// pl.INT32)`, `pl.cast(f, pl.INT32)`). Integer scalars are `index` values here (index_exprs.cpp), so
// each result ends as one.
#include <fmt/format.h>

#include "kernel_emitter.h"
#include "mlir_types.h"

namespace pypto::backend_ptoas {

// `%c = arith.cmpf oeq, %a, %b : f32`, both operands at `dtype`. The ordered predicates make a
// comparison with NaN false, as Python's are, except `!=` (une), which NaN makes true.
std::string KernelEmitter::FloatComparison(const ir::BinaryExpr& compare, ir::DataType dtype, const ir::Span& span) {
  auto operand = [&](const ir::ExprPtr& expr) -> TypedValue {
    if (IsElementRead(*expr)) return {ReadElement(*expr->As<ir::Call>(), "element", span), ElementOf(dtype)};
    return ScalarOperand(expr, dtype, span);
  };
  const TypedValue lhs = operand(compare.lhs());
  const TypedValue rhs = operand(compare.rhs());
  const char* predicate = "oeq";
  switch (compare.op()) {
    case ir::BinaryOp::Eq: predicate = "oeq"; break;
    case ir::BinaryOp::Ne: predicate = "une"; break;
    case ir::BinaryOp::Lt: predicate = "olt"; break;
    case ir::BinaryOp::Le: predicate = "ole"; break;
    case ir::BinaryOp::Gt: predicate = "ogt"; break;
    case ir::BinaryOp::Ge: predicate = "oge"; break;
    default: break;  // the plan accepts comparisons only
  }
  std::string value = names_.Temp();
  Add(body_, fmt::format("{} = arith.cmpf {}, {}, {} : {}", value, predicate, lhs.value, rhs.value, lhs.type), span);
  return value;
}

// An i1 as 0 or 1: zero-extended (arith.index_cast would sign-extend true to -1).
std::string KernelEmitter::BoolToIndex(const std::string& flag, const std::string& name, const ir::Span& span) {
  const std::string wide = names_.Temp();
  Add(body_, fmt::format("{} = arith.extui {} : i1 to i64", wide, flag), span);
  std::string value = names_.Named(name);
  Add(body_, fmt::format("{} = arith.index_cast {} : i64 to index", value, wide), span);
  return value;
}

// pl.cast(f, pl.INT32): rounded toward zero into the target's width (arith.fptosi), then widened
// to index by its sign.
std::string KernelEmitter::FloatToIndex(const ir::Call& cast, const std::string& name, const ir::Span& span) {
  const ir::DataType from = cast.args()[0]->type()->As<ir::ScalarType>()->dtype();
  const ir::DataType to = cast.type()->As<ir::ScalarType>()->dtype();
  const TypedValue source = ScalarOperand(cast.args()[0], from, span);
  const std::string integer = to == ir::DataType::INDEX ? "i64" : ElementOf(to);
  const std::string truncated = names_.Temp();
  Add(body_, fmt::format("{} = arith.fptosi {} : {} to {}", truncated, source.value, source.type, integer), span);
  std::string value = names_.Named(name);
  Add(body_, fmt::format("{} = arith.index_cast {} : {} to index", value, truncated, integer), span);
  return value;
}

}  // namespace pypto::backend_ptoas
