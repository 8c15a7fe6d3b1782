// Orchestration scalars: literal encoding for add_scalar, C++ scalar types, narrowing and casts.
#include "orchestration_scalars.h"

#include <bit>
#include <cmath>
#include <limits>

#include "pypto/ir/op_registry.h"

namespace pypto::codegen_orch::detail {

using ir::DiagnosticKind;
using ir::MakeError;

namespace {

// IEEE binary16 from binary32, rounded to nearest even; NaN stays a (quiet) NaN.
uint16_t Fp16Bits(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t exponent = (x >> 23) & 0xFFu;
  uint32_t mantissa = x & 0x7FFFFFu;
  if (exponent == 0xFF) return sign | 0x7C00u | (mantissa ? 0x200u : 0u);
  const int biased = static_cast<int>(exponent) - 127 + 15;
  if (biased >= 31) return sign | 0x7C00u;  // overflows to infinity
  // Keep `kept` bits above the rounding point, then round the remainder to nearest even (a carry
  // out of the mantissa moves to the next exponent, or to infinity, as it should).
  uint32_t shift = 13;
  uint32_t half = 0;
  if (biased <= 0) {  // subnormal in FP16
    if (biased < -10) return sign;
    mantissa |= 0x800000u;
    shift = static_cast<uint32_t>(14 - biased);
  } else {
    half = static_cast<uint32_t>(biased) << 10;
  }
  half |= mantissa >> shift;
  const uint32_t rest = mantissa & ((1u << shift) - 1);
  const uint32_t midpoint = 1u << (shift - 1);
  if (rest > midpoint || (rest == midpoint && (half & 1u))) ++half;
  return static_cast<uint16_t>(sign | half);
}

// bfloat16 from binary32: its top half, rounded to nearest even; NaN stays a (quiet) NaN.
uint16_t Bf16Bits(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  if (std::isnan(value)) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace

uint16_t HalfFloatBits(float value, ir::DataType dtype) {
  return dtype == ir::DataType::BF16 ? Bf16Bits(value) : Fp16Bits(value);
}

ir::Result<ScalarArg> EncodeScalar(const ir::Expr& arg, ir::DataType dtype, const std::string& what) {
  const auto* as_int = arg.As<ir::ConstInt>();
  const auto* as_float = arg.As<ir::ConstFloat>();
  const auto* as_bool = arg.As<ir::ConstBool>();
  if (!as_int && !as_float && !as_bool)
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("{} must be a literal; scalar values computed in orchestration code are not "
                                 "supported yet",
                                 what),
                     arg.span());
  if (dtype == ir::DataType::FP32 || dtype == ir::DataType::FP64) {
    if (as_bool)
      return MakeError(DiagnosticKind::Type, fmt::format("{} is {}, but a bool was passed", what,
                                                         ir::DataTypeName(dtype)),
                       arg.span());
    const double value = as_float ? as_float->value() : static_cast<double>(as_int->value());
    if (dtype == ir::DataType::FP64) {
      if (!std::isfinite(value))
        return ScalarArg{std::bit_cast<uint64_t>(value), fmt::format("{:#x}ull", std::bit_cast<uint64_t>(value))};
      return ScalarArg{std::bit_cast<uint64_t>(value), fmt::format("to_u64({})", FloatLiteral(value))};
    }
    const float narrowed = static_cast<float>(value);
    const uint64_t bits = std::bit_cast<uint32_t>(narrowed);
    if (!std::isfinite(narrowed)) return ScalarArg{bits, fmt::format("(uint64_t){:#x}", bits)};
    return ScalarArg{bits, fmt::format("to_u64({}f)", FloatLiteral(narrowed))};
  }
  if (dtype == ir::DataType::FP16 || dtype == ir::DataType::BF16) {
    if (as_bool)
      return MakeError(DiagnosticKind::Type, fmt::format("{} is {}, but a bool was passed", what,
                                                         ir::DataTypeName(dtype)),
                       arg.span());
    // The 16 bits in the low end of the slot, the rest zero, as the runtime's to_u64 packs a
    // 16-bit float and the kernel's union reads it back; written as the bit pattern, since the
    // orchestration's C++ has no 16-bit float type to convert with.
    const double value = as_float ? as_float->value() : static_cast<double>(as_int->value());
    const uint16_t bits = HalfFloatBits(static_cast<float>(value), dtype);
    return ScalarArg{bits, fmt::format("(uint64_t){:#06x} /* {} {} */", bits, ir::DataTypeName(dtype),
                                       FloatLiteral(value))};
  }
  if (dtype == ir::DataType::BOOL || ir::IsInteger(dtype)) {
    if (as_float)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("{} is {}, but the floating-point literal {} was passed", what,
                                   ir::DataTypeName(dtype), as_float->value()),
                       arg.span());
    const int64_t value = as_bool ? int64_t{as_bool->value()} : as_int->value();
    if (dtype == ir::DataType::BOOL) {
      if (value != 0 && value != 1)
        return MakeError(DiagnosticKind::Type, fmt::format("{} is BOOL, but {} was passed", what, value), arg.span());
      return ScalarArg{static_cast<uint64_t>(value), fmt::format("(uint64_t){}", value)};
    }
    if (ir::DataTypeBits(dtype) < 64) {
      const auto [lowest, highest] = ir::IntegerRange(dtype);
      if (value < lowest || value > highest)
        return MakeError(DiagnosticKind::Type,
                         fmt::format("{} is {}, which cannot hold {}", what, ir::DataTypeName(dtype), value),
                         arg.span());
    }
    // Negative values reach 64 bits sign-extended, as `(uint64_t)` of the signed value does.
    if (value == std::numeric_limits<int64_t>::min()) return ScalarArg{static_cast<uint64_t>(value), "(uint64_t)INT64_MIN"};
    return ScalarArg{static_cast<uint64_t>(value), fmt::format("(uint64_t){}", value)};
  }
  return MakeError(DiagnosticKind::Type,
                   fmt::format("{} is {}; kernel scalars of that dtype are not supported yet", what,
                               ir::DataTypeName(dtype)),
                   arg.span());
}

ir::DataType ScalarDtype(const ir::Var& param, const ir::Expr& arg) {
  if (const auto* scalar = param.type()->As<ir::ScalarType>()) return scalar->dtype();
  if (const auto* scalar = arg.type()->As<ir::ScalarType>()) return scalar->dtype();
  return ir::DataType::INT64;
}

std::optional<std::string_view> CppScalarType(ir::DataType dtype) {
  switch (dtype) {
    case ir::DataType::BOOL: return "bool";
    case ir::DataType::INT8: return "int8_t";
    case ir::DataType::INT16: return "int16_t";
    case ir::DataType::INT32: return "int32_t";
    case ir::DataType::INT64:
    case ir::DataType::INDEX: return "int64_t";
    case ir::DataType::UINT8: return "uint8_t";
    case ir::DataType::UINT16: return "uint16_t";
    case ir::DataType::UINT32: return "uint32_t";
    case ir::DataType::UINT64: return "uint64_t";
    case ir::DataType::FP32: return "float";
    case ir::DataType::FP64: return "double";
    default: return std::nullopt;
  }
}

uint64_t ElementBits(double value, ir::DataType dtype) {
  if (value == 0) return 0;
  if (dtype == ir::DataType::FP32) return std::bit_cast<uint32_t>(static_cast<float>(value));
  if (dtype == ir::DataType::FP64) return std::bit_cast<uint64_t>(value);
  if (value >= 0x1p63) return static_cast<uint64_t>(value);  // UINT64 beyond INT64's range
  return static_cast<uint64_t>(static_cast<int64_t>(value));
}

Value Narrow(Value value, ir::DataType dtype) {
  if (ir::IsFloat(dtype)) {
    const double f = value.AsDouble();
    return Value{.is_float = true, .f = dtype == ir::DataType::FP32 ? static_cast<double>(static_cast<float>(f)) : f};
  }
  int64_t i = value.is_float ? static_cast<int64_t>(value.f) : value.i;
  switch (dtype) {
    case ir::DataType::BOOL: i = i != 0; break;
    case ir::DataType::INT8: i = static_cast<int8_t>(i); break;
    case ir::DataType::INT16: i = static_cast<int16_t>(i); break;
    case ir::DataType::INT32: i = static_cast<int32_t>(i); break;
    case ir::DataType::UINT8: i = static_cast<uint8_t>(i); break;
    case ir::DataType::UINT16: i = static_cast<uint16_t>(i); break;
    case ir::DataType::UINT32: i = static_cast<uint32_t>(i); break;
    default: break;
  }
  return Value{.i = i};
}

const ir::Call* AsScalarCast(const ir::Expr& expr) {
  const auto* call = expr.As<ir::Call>();
  if (!call || !call->is_op_call() || call->op()->name != "scalar.cast" || call->args().size() != 1) return nullptr;
  return call->args()[0]->type()->As<ir::ScalarType>() && call->type()->As<ir::ScalarType>() ? call : nullptr;
}

}  // namespace pypto::codegen_orch::detail
