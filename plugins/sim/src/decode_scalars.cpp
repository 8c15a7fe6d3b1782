// Decoding scalar expressions into operands and register code: integer arithmetic, FP32 comparisons,
// scalar casts, launch values (block index and kin) and kernel arrays. Tile ops only consume these.
#include "kernel_decoder.h"

#include <fmt/format.h>

#include <bit>
#include <optional>
#include <utility>

#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"

namespace pypto::sim::decode {

namespace {

std::optional<ScalarOp> ToScalarOp(ir::BinaryOp op) {
  switch (op) {
    case ir::BinaryOp::Add: return ScalarOp::Add;
    case ir::BinaryOp::Sub: return ScalarOp::Sub;
    case ir::BinaryOp::Mul: return ScalarOp::Mul;
    case ir::BinaryOp::FloorDiv: return ScalarOp::FloorDiv;
    case ir::BinaryOp::FloorMod: return ScalarOp::FloorMod;
    case ir::BinaryOp::Min: return ScalarOp::Min;
    case ir::BinaryOp::Max: return ScalarOp::Max;
    case ir::BinaryOp::Shl: return ScalarOp::Shl;
    case ir::BinaryOp::Shr: return ScalarOp::Shr;
    case ir::BinaryOp::Eq: return ScalarOp::Eq;
    case ir::BinaryOp::Ne: return ScalarOp::Ne;
    case ir::BinaryOp::Lt: return ScalarOp::Lt;
    case ir::BinaryOp::Le: return ScalarOp::Le;
    case ir::BinaryOp::Gt: return ScalarOp::Gt;
    case ir::BinaryOp::Ge: return ScalarOp::Ge;
    case ir::BinaryOp::FloatDiv: break;
  }
  return std::nullopt;
}

// The first of the consecutive registers holding every element of `array`, in order; none when an
// element is an immediate or lies elsewhere.
std::optional<uint32_t> ConsecutiveRegisters(const ArrayValue& array) {
  if (array.elements.empty()) return std::nullopt;
  for (size_t e = 0; e < array.elements.size(); ++e)
    if (!array.elements[e].is_reg() || array.elements[e].reg != array.elements[0].reg + static_cast<int32_t>(e))
      return std::nullopt;
  return static_cast<uint32_t>(array.elements[0].reg);
}

}  // namespace

// Scalars the simulator computes with: integers of any width, and booleans (comparisons).
bool IsIntScalar(const ir::TypePtr& type) {
  const auto* scalar = type ? type->As<ir::ScalarType>() : nullptr;
  return scalar && (ir::IsInteger(scalar->dtype()) || scalar->dtype() == ir::DataType::BOOL);
}

// `a = pl.array.create(n, dtype)` (n zeros), `x = a[i]` and `a[i] = x` (a new array value) in a
// kernel. Each element is an operand of its own while the indices are known when the kernel is
// decoded (constants, or a pl.unroll loop's variable once UnrollLoops has copied the body); an index
// computed at run time reads or writes the array laid out in consecutive registers (IndexedArrayOp).
pypto::expected<void, std::string> Decoder::DecodeArrayOp(const std::string& op, const ir::VarPtr& target,
                                                          const ir::Call& call) {
  if (op == "array.create") {
    const auto* type = call.type()->As<ir::ArrayType>();
    if (target) values_[target.get()] = ArrayValue{std::vector<Operand>(type->extent(), Operand::Imm(0))};
    return {};
  }
  auto array = ArrayOf(call.args()[0]);
  if (!array) return Error(array.error());
  auto index = Scalar(call.args()[1]);
  if (!index) return Error(index.error());
  if (index->is_reg()) {
    if (auto ok = IndexedArrayOp(op, target, call, *array, *index); !ok) return ok;
  } else {
    if (index->imm < 0 || index->imm >= static_cast<int64_t>(array->elements.size()))
      return Fail(fmt::format("index {} is out of range for the {} elements of '{}'", index->imm,
                              array->elements.size(), ir::PrintExpr(call.args()[0])));
    if (!target) return {};
    if (op == "array.get_element") {
      values_[target.get()] = ScalarValue{array->elements[static_cast<size_t>(index->imm)]};
    } else {
      auto element = Scalar(call.args()[2]);
      if (!element) return Error(element.error());
      array->elements[static_cast<size_t>(index->imm)] = *element;
      values_[target.get()] = *array;
    }
  }
  if (target && loop_depth_ > 0) loop_scalars_.push_back(target.get());
  return {};
}

// An element read or written at an index computed at run time: the array's elements lie in
// consecutive registers (copied there unless a read finds them so; an update always writes a new
// copy, so that values read from the old array stay what they were), the index is checked against
// the extent, and one indexed register access follows.
pypto::expected<void, std::string> Decoder::IndexedArrayOp(const std::string& op, const ir::VarPtr& target,
                                                           const ir::Call& call, const ArrayValue& array,
                                                           Operand index) {
  if (!target) return {};
  const std::string name = ir::PrintExpr(call.args()[0]);
  const auto extent = static_cast<int64_t>(array.elements.size());
  const bool get = op == "array.get_element";
  // A read of an array already in consecutive registers (a loop-carried one, or what an indexed
  // update wrote) reads them where they are.
  std::optional<uint32_t> first = get ? ConsecutiveRegisters(array) : std::nullopt;
  if (!first) {
    first = static_cast<uint32_t>(kernel_.registers.size());
    for (size_t e = 0; e < array.elements.size(); ++e) {
      const uint32_t reg = NewRegister(fmt::format("{}[{}]", name, e), "array indexed at run time");
      pending_.push_back(ScalarInstr{ScalarOp::Add, reg, array.elements[e], Operand::Imm(0)});
      pending_text_.push_back(fmt::format("{}[{}]", name, e));
    }
  }
  const std::string text = ir::PrintExpr(call.args()[1]);
  // The scalar code runs with the next instruction, which may lie elsewhere: the check names its place.
  pending_.push_back(ScalarInstr{ScalarOp::CheckIndex, static_cast<uint32_t>(index.reg), index, Operand::Imm(extent)});
  pending_text_.push_back(fmt::format("{}[{}]` at `{}", name, text, span_->str()));
  if (get) {
    const uint32_t element = NewRegister(target->name_hint(), "array element");
    pending_.push_back(ScalarInstr{ScalarOp::LoadIndexed, element, Operand::Imm(*first), index});
    pending_text_.push_back(fmt::format("{}[{}]", name, text));
    values_[target.get()] = ScalarValue{Operand::Reg(element)};
    return {};
  }
  auto value = Scalar(call.args()[2]);
  if (!value) return Error(value.error());
  pending_.push_back(ScalarInstr{ScalarOp::StoreIndexed, *first, index, *value});
  pending_text_.push_back(fmt::format("{}[{}] = {}", name, text, ir::PrintExpr(call.args()[2])));
  ArrayValue updated;
  for (int64_t e = 0; e < extent; ++e) updated.elements.push_back(Operand::Reg(*first + static_cast<uint32_t>(e)));
  values_[target.get()] = std::move(updated);
  return {};
}

pypto::expected<ArrayValue, std::string> Decoder::ArrayOf(const ir::ExprPtr& expr) {
  const auto* var = expr->As<ir::Var>();
  auto it = var ? values_.find(var) : values_.end();
  const auto* array = it == values_.end() ? nullptr : std::get_if<ArrayValue>(&it->second);
  if (!array) return Fail(fmt::format("`{}` is not an array the kernel defines", ir::PrintExpr(expr)));
  return *array;
}

// One register per element of an array that control flow merges or carries.
ArrayValue Decoder::ArrayRegisters(const ir::Var& var, const char* role) {
  ArrayValue registers;
  for (int64_t e = 0; e < var.type()->As<ir::ArrayType>()->extent(); ++e)
    registers.elements.push_back(Operand::Reg(NewRegister(fmt::format("{}[{}]", var.name_hint(), e), role)));
  return registers;
}

pypto::expected<void, std::string> Decoder::CopyArray(const ir::ExprPtr& from, const ArrayValue& to) {
  auto source = ArrayOf(from);
  if (!source) return Error(source.error());
  for (size_t e = 0; e < to.elements.size(); ++e) {
    pending_.push_back(ScalarInstr{ScalarOp::Add, static_cast<uint32_t>(to.elements[e].reg), source->elements[e],
                                   Operand::Imm(0)});
    pending_text_.push_back(fmt::format("{}[{}]", ir::PrintExpr(from), e));
  }
  return {};
}

// An integer scalar expression as an operand: constants stay immediates (the frontend has folded
// constant arithmetic; what is left is folded here too), anything else is computed into a
// register by scalar code that runs before the next instruction. An expression already computed
// in the current loop scope is reused.
pypto::expected<Operand, std::string> Decoder::Scalar(const ir::ExprPtr& expr) {
  if (const auto* constant = expr->As<ir::ConstInt>()) return Operand::Imm(constant->value());
  if (const auto* constant = expr->As<ir::ConstBool>()) return Operand::Imm(constant->value() ? 1 : 0);
  if (const auto* var = expr->As<ir::Var>()) {
    auto it = values_.find(var);
    if (it != values_.end()) {
      if (const auto* scalar = std::get_if<ScalarValue>(&it->second)) return scalar->operand;
      return Fail(fmt::format("'{}' is a {}, not an integer scalar", var->name_hint(),
                              std::holds_alternative<TileValue>(it->second) ? "tile" : "tensor"));
    }
    if (const auto* scalar = var->type()->As<ir::ScalarType>(); scalar && !IsIntScalar(var->type())) {
      return Fail(fmt::format("'{}' is a {} scalar; the simulator computes only with integer scalars so far",
                              var->name_hint(), ir::DataTypeName(scalar->dtype())));
    }
    return Fail(fmt::format("'{}' is used before it is assigned", var->name_hint()));
  }
  const std::string text = ir::PrintExpr(expr);
  if (const auto* call = expr->As<ir::Call>(); call && call->is_op_call() && call->op()->name == "scalar.cast" &&
                                               IsIntScalar(call->type()) && IsIntScalar(call->args()[0]->type()))
    return CastOperand(*call, text);
  if (IsIntScalar(expr->type()))
    if (auto read = NestedReadOperand(expr)) return *read;
  const auto* binary = expr->As<ir::BinaryExpr>();
  if (!binary) {
    if (expr->Is<ir::ConstFloat>()) {
      return Fail(fmt::format("`{}` is a floating-point scalar; the simulator computes only with integer scalars "
                              "so far",
                              text));
    }
    return Fail(fmt::format("`{}` is not a scalar expression the simulator can evaluate", text));
  }
  if (ir::IsComparison(binary->op()) && IsFp32Scalar(binary->lhs()) && IsFp32Scalar(binary->rhs()))
    return Fp32Comparison(*binary, text);
  const auto op = ToScalarOp(binary->op());
  if (!op) {
    return Fail(fmt::format("`{}` is a true division, which yields a float; the simulator computes only with "
                            "integer scalars so far (use //)",
                            text));
  }
  if (!IsIntScalar(binary->lhs()->type()) || !IsIntScalar(binary->rhs()->type()) ||
      !IsIntScalar(binary->type())) {
    return Fail(fmt::format("`{}` computes with {} and {}; the simulator computes only with integer scalars so "
                            "far",
                            text, binary->lhs()->type()->str(), binary->rhs()->type()->str()));
  }
  auto lhs = Scalar(binary->lhs());
  if (!lhs) return lhs;
  auto rhs = Scalar(binary->rhs());
  if (!rhs) return rhs;
  const bool divides = *op == ScalarOp::FloorDiv || *op == ScalarOp::FloorMod;
  if (divides && !rhs->is_reg() && rhs->imm == 0) return Fail(fmt::format("`{}` divides by zero", text));
  const bool shifts = *op == ScalarOp::Shl || *op == ScalarOp::Shr;
  if (shifts && !rhs->is_reg() && (rhs->imm < 0 || rhs->imm >= 64))
    return Fail(fmt::format("`{}` shifts by {}, outside [0, 64)", text, rhs->imm));
  if (!lhs->is_reg() && !rhs->is_reg()) {
    int64_t value = 0;
    EvalScalar(*op, lhs->imm, rhs->imm, value);
    return Operand::Imm(value);
  }
  for (const auto& done : computed_)
    if (done.op == *op && done.a == *lhs && done.b == *rhs) return Operand::Reg(done.reg);
  const uint32_t reg = NewRegister(text, "");
  pending_.push_back(ScalarInstr{*op, reg, *lhs, *rhs});
  pending_text_.push_back(text);
  computed_.push_back(Computed{*op, *lhs, *rhs, reg});
  return Operand::Reg(reg);
}

bool Decoder::IsFp32Scalar(const ir::ExprPtr& expr) {
  const auto* scalar = expr->type()->As<ir::ScalarType>();
  return scalar && scalar->dtype() == ir::DataType::FP32;
}

// An FP32 operand of a comparison: the bits register of a pl.read element or an FP32 parameter, or
// the bits of a constant.
pypto::expected<Operand, std::string> Decoder::Fp32Operand(const ir::ExprPtr& expr) {
  if (const auto* constant = expr->As<ir::ConstFloat>())
    return Operand::Imm(std::bit_cast<uint32_t>(static_cast<float>(constant->value())));
  if (auto read = NestedReadOperand(expr)) return *read;  // `pl.read(t, [0, c]) == best`: read where compared
  const auto* var = expr->As<ir::Var>();
  if (auto it = var ? float_regs_.find(var) : float_regs_.end(); it != float_regs_.end())
    return Operand::Reg(it->second);
  return Fail(fmt::format("`{}` is an FP32 scalar the simulator does not hold; it compares FP32 values read with "
                          "pl.read, FP32 parameters and constants",
                          ir::PrintExpr(expr)));
}

// `val == best_val` on two FP32 scalars: 0 or 1 in an integer register, as other comparisons.
pypto::expected<Operand, std::string> Decoder::Fp32Comparison(const ir::BinaryExpr& binary, const std::string& text) {
  auto lhs = Fp32Operand(binary.lhs());
  if (!lhs) return lhs;
  auto rhs = Fp32Operand(binary.rhs());
  if (!rhs) return rhs;
  static constexpr std::pair<ir::BinaryOp, ScalarOp> kOps[] = {
      {ir::BinaryOp::Eq, ScalarOp::FEq}, {ir::BinaryOp::Ne, ScalarOp::FNe}, {ir::BinaryOp::Lt, ScalarOp::FLt},
      {ir::BinaryOp::Le, ScalarOp::FLe}, {ir::BinaryOp::Gt, ScalarOp::FGt}, {ir::BinaryOp::Ge, ScalarOp::FGe}};
  ScalarOp op = ScalarOp::FEq;
  for (auto [from, to] : kOps)
    if (from == binary.op()) op = to;
  if (!lhs->is_reg() && !rhs->is_reg()) {
    int64_t value = 0;
    EvalScalar(op, lhs->imm, rhs->imm, value);
    return Operand::Imm(value);
  }
  const uint32_t reg = NewRegister(text, "");
  pending_.push_back(ScalarInstr{op, reg, *lhs, *rhs});
  pending_text_.push_back(text);
  return Operand::Reg(reg);
}

std::optional<LaunchValue> Decoder::LaunchValueOf(const std::string& op) {
  if (op == "tile.get_block_idx") return LaunchValue::BlockIdx;
  if (op == "tile.get_block_num") return LaunchValue::BlockNum;
  if (op == "tile.get_subblock_idx") return LaunchValue::SubBlockIdx;
  return std::nullopt;
}

// `b = pl.tile.get_block_idx()`: a register the kernel starts with, one per value.
pypto::expected<void, std::string> Decoder::DecodeLaunchValue(LaunchValue value, const ir::VarPtr& target) {
  if (!target) return {};
  for (const auto& init : kernel_.launch_values) {
    if (init.value != value) continue;
    values_[target.get()] = ScalarValue{Operand::Reg(init.reg)};
    return {};
  }
  const char* role = value == LaunchValue::BlockIdx   ? "block index"
                     : value == LaunchValue::BlockNum ? "block count"
                                                      : "AIV lane";
  const uint32_t reg = NewRegister(target->name_hint(), role);
  kernel_.launch_values.push_back(LaunchValueInit{.reg = reg, .value = value});
  values_[target.get()] = ScalarValue{Operand::Reg(reg)};
  return {};
}

// `k = pl.cast(s, pl.INDEX)`: registers hold integers as int64 (narrower ones read sign- or
// zero-extended), so a cast that keeps every value of its source (to a type at least as wide, and
// signed unless the source is unsigned) names the same value. Any other integer cast wraps, as on a
// device: the low bits of the target's width, sign- or zero-extended as the target reads them.
pypto::expected<void, std::string> Decoder::DecodeScalarCast(const ir::VarPtr& target, const ir::Call& call) {
  if (!target) return {};  // a cast nobody uses
  if (IsFp32Scalar(call.args()[0]) || IsFp32Scalar(target)) return DecodeFloatCast(target, call);
  auto operand = CastOperand(call, target->name_hint());
  if (!operand) return Error(operand.error());
  values_[target.get()] = ScalarValue{*operand};
  if (loop_depth_ > 0) loop_scalars_.push_back(target.get());
  return {};
}

// `i = pl.cast(f, pl.INT32)` of an FP32 (rounded toward zero) into an integer register, or
// `f = pl.cast(i, pl.FP32)` into the FP32-bits register that FP32 comparisons read.
pypto::expected<void, std::string> Decoder::DecodeFloatCast(const ir::VarPtr& target, const ir::Call& call) {
  const ir::ExprPtr& source = call.args()[0];
  const bool from_float = IsFp32Scalar(source), to_float = IsFp32Scalar(target);
  auto operand = from_float ? Fp32Operand(source) : Scalar(source);
  if (!operand) return Error(operand.error());
  const ScalarOp op = to_float ? ScalarOp::SiToFp : ScalarOp::FpToSi;
  const ir::DataType to = call.type()->As<ir::ScalarType>()->dtype();
  const auto bits = Operand::Imm(8 * static_cast<int64_t>(ir::DataTypeBytes(to)));
  Operand result = *operand;
  if (from_float == to_float) {
    // pl.cast(0.0, pl.FP32): the value itself.
  } else if (operand->is_reg()) {
    result = Operand::Reg(NewRegister(target->name_hint(), to_float ? "FP32 bits" : "cast of an FP32"));
    pending_.push_back(ScalarInstr{op, static_cast<uint32_t>(result.reg), *operand, bits});
    pending_text_.push_back(fmt::format("pl.cast({}, pl.{})", ir::PrintExpr(source), ir::DataTypeName(to)));
  } else {
    int64_t value = 0;
    EvalScalar(op, operand->imm, bits.imm, value);
    result = Operand::Imm(value);
  }
  if (!to_float) {
    values_[target.get()] = ScalarValue{result};
    if (loop_depth_ > 0) loop_scalars_.push_back(target.get());
    return {};
  }
  if (!result.is_reg()) {  // an FP32 constant still needs a register to be named by
    const uint32_t reg = NewRegister(target->name_hint(), "FP32 bits");
    pending_.push_back(ScalarInstr{ScalarOp::Add, reg, result, Operand::Imm(0)});
    pending_text_.push_back(target->name_hint());
    result = Operand::Reg(reg);
  }
  float_regs_[target.get()] = static_cast<uint32_t>(result.reg);
  return {};
}

// The value of an integer scalar cast (named `name` in listings), also where it stands inside a
// larger expression (`if c == pl.cast(296, pl.INT32)`).
pypto::expected<Operand, std::string> Decoder::CastOperand(const ir::Call& call, const std::string& name) {
  const ir::DataType from = call.args()[0]->type()->As<ir::ScalarType>()->dtype();
  const ir::DataType to = call.type()->As<ir::ScalarType>()->dtype();
  const auto is_unsigned = [](ir::DataType dtype) { return std::string_view(ir::DataTypeName(dtype)).starts_with("UINT"); };
  auto operand = Scalar(call.args()[0]);
  if (!operand) return operand;
  if (ir::DataTypeBytes(to) >= ir::DataTypeBytes(from) && (!is_unsigned(to) || is_unsigned(from))) return operand;
  const ScalarOp op = is_unsigned(to) ? ScalarOp::ZeroExtend : ScalarOp::SignExtend;
  const Operand bits = Operand::Imm(8 * static_cast<int64_t>(ir::DataTypeBytes(to)));
  if (!operand->is_reg()) {
    int64_t value = 0;
    EvalScalar(op, operand->imm, bits.imm, value);
    return Operand::Imm(value);
  }
  const uint32_t reg = NewRegister(name, "narrowing cast");
  pending_.push_back(ScalarInstr{op, reg, *operand, bits});
  pending_text_.push_back(fmt::format("pl.cast({}, pl.{})", ir::PrintExpr(call.args()[0]), ir::DataTypeName(to)));
  return Operand::Reg(reg);
}

}  // namespace pypto::sim::decode
