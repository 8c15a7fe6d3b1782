// Orchestration scalars: the C++ types that hold them, literals encoded as kernel scalar arguments,
// the value a scalar takes while the plan expands (Value) and what narrowing it to a dtype leaves.
// The emitter writes C++ from these and the loop expansion computes with them, so both agree.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pypto/ir/diagnostic.h"
#include "pypto/ir/expr.h"

namespace pypto::codegen_orch::detail {

// A scalar kernel argument: its 64-bit pattern for the plan and the same value as C++ for add_scalar.
struct ScalarArg {
  uint64_t bits = 0;
  std::string cpp;
};

// The shortest decimal text that reads back as the same value, as a C++ floating literal.
template <typename T>
std::string FloatLiteral(T value) {
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

// Encodes a literal for a kernel scalar parameter of `dtype`, as upstream's add_scalar receives it:
// floats as their bit pattern zero-extended (to_u64), integers sign- or zero-extended to 64 bits.
ir::Result<ScalarArg> EncodeScalar(const ir::Expr& arg, ir::DataType dtype, const std::string& what);

// The bits of `value` rounded (to nearest, ties to even) to an FP16 or a BF16: what a kernel's
// `pl.Scalar[pl.FP16]` / `pl.Scalar[pl.BF16]` parameter reads from the low 16 bits of its slot.
uint16_t HalfFloatBits(float value, ir::DataType dtype);

// The dtype a scalar argument is passed as: the callee parameter's, or the literal's own.
ir::DataType ScalarDtype(const ir::Var& param, const ir::Expr& arg);

// An orchestration scalar while the loops expand: an integer (INDEX, INTn, UINTn, BOOL) or a float.
struct Value {
  bool is_float = false;
  int64_t i = 0;
  double f = 0;
  double AsDouble() const { return is_float ? f : static_cast<double>(i); }
};

// The C++ type that holds an orchestration scalar of `dtype`.
std::optional<std::string_view> CppScalarType(ir::DataType dtype);

// The bit pattern of `value` as an element of `dtype`: a tensor's starting value, which the type
// deduction of tensor.create has checked the dtype holds (any dtype holds 0).
uint64_t ElementBits(double value, ir::DataType dtype);

// What assigning `value` to a C++ variable of `dtype` leaves in it.
Value Narrow(Value value, ir::DataType dtype);

// `pl.cast(n, pl.INDEX)` on an orchestration scalar: a conversion the C++ and the plan expansion both
// compute (as a C++ static_cast does).
const ir::Call* AsScalarCast(const ir::Expr& expr);

}  // namespace pypto::codegen_orch::detail
