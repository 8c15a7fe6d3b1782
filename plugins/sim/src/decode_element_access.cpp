// Decoding pl.read and pl.write of single elements of tensors and tiles, into and out of registers;
// also reads nested inside scalar expressions. Separate from whole-tile loads and stores.
#include "kernel_decoder.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <utility>

#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"

namespace pypto::sim::decode {

// `s = pl.read(t, [i, j])`: integers become integer registers, an FP32 an FP32-bits register
// that tile-scalar ops read (as an FP32 scalar parameter is).
pypto::expected<void, std::string> Decoder::DecodeRead(const ir::VarPtr& target, const ir::Call& call) {
  if (!target) return {};  // a read nobody uses
  auto read = EmitRead(call, target->name_hint());
  if (!read) return Error(read.error());
  BindRead(target, read->reg, read->is_float);
  return {};
}

// `pl.read(tensor, indices)` into a new register named `name`.
pypto::expected<Decoder::ElementRead, std::string> Decoder::EmitRead(const ir::Call& call, const std::string& name) {
  auto tensor = Tensor(call.args()[0], "source of pl.read");
  if (!tensor) return pypto::unexpected(tensor.error());
  auto offsets = Offsets(call.args()[1], "pl.read indices");
  if (!offsets) return pypto::unexpected(offsets.error());
  const ir::DataType dtype = (*tensor)->dtype;
  const bool half = dtype == ir::DataType::FP16 || dtype == ir::DataType::BF16;
  const bool is_float = dtype == ir::DataType::FP32 || half;
  const bool is_int = ir::IsInteger(dtype) && ir::DataTypeBytes(dtype) <= 8;
  if (!is_float && !is_int)
    return Fail(fmt::format("pl.read of a {} tensor: the simulator reads integer, FP32, FP16 and BF16 elements only",
                            ir::DataTypeName(dtype)));
  Instr instr;
  instr.op = Opcode::ReadScalar;
  // An FP16 or BF16 element lands in the register widened to FP32, as the scalar unit computes.
  if (half) instr.widen = dtype == ir::DataType::FP16 ? Widen::Half : Widen::BFloat;
  if (auto ok = CheckRegion(**tensor, *offsets, call.args()[1], ir::Shape(offsets->size(), 1), instr); !ok)
    return pypto::unexpected(ok.error());
  instr.elem_bytes = static_cast<uint8_t>(ir::DataTypeBytes(dtype));
  // I32 marks a signed integer (sign-extended); Raw an unsigned one or the bits of an FP32.
  instr.kind = is_int && static_cast<uint8_t>(dtype) < 0x20 ? ElemKind::I32 : ElemKind::Raw;
  const uint32_t reg = NewReadRegister(name, is_float);
  instr.scalar_dst = static_cast<int32_t>(reg);
  Emit(instr);
  return ElementRead{reg, is_float};
}

// An element read inside a scalar expression (`if i < n and pl.read(flags, [i]) > 0`), of a tensor
// or a tile: read where the expression is evaluated, so a read guarded by an enclosing if happens
// only when it runs; the operand is the register the element lands in. nullopt for any other
// expression.
std::optional<pypto::expected<Operand, std::string>> Decoder::NestedReadOperand(const ir::ExprPtr& expr) {
  const auto* call = expr->As<ir::Call>();
  if (!call || !call->is_op_call()) return std::nullopt;
  const std::string& op = call->op()->name;
  if (op != "tensor.read" && op != "tile.read") return std::nullopt;
  auto read = op == "tensor.read" ? EmitRead(*call, ir::PrintExpr(expr)) : EmitTileRead(*call, ir::PrintExpr(expr));
  if (!read) return pypto::unexpected(read.error());
  return Operand::Reg(read->reg);
}

// Binds `target` to the register an element read landed in: an FP32-bits register for an FP32
// (what tile-scalar ops read), else an integer one.
void Decoder::BindRead(const ir::VarPtr& target, uint32_t reg, bool is_float) {
  if (is_float) {
    float_regs_[target.get()] = reg;
  } else {
    values_[target.get()] = ScalarValue{Operand::Reg(reg)};
    if (loop_depth_ > 0) loop_scalars_.push_back(target.get());
  }
}

// A new register for an element read, bound to `target`.
uint32_t Decoder::NewReadRegister(std::string name, bool is_float) {
  return NewRegister(std::move(name), is_float ? "read (FP32 bits)" : "read");
}

// The element types pl.read and pl.write move: integers (kept in integer registers) and FP32
// (its bits in an FP32-bits register).
pypto::expected<void, std::string> Decoder::CheckElementDtype(ir::DataType dtype, const char* op,
                                                              const char* what) const {
  if (dtype == ir::DataType::FP32 || (ir::IsInteger(dtype) && ir::DataTypeBytes(dtype) <= 8)) return {};
  return Fail(fmt::format("{} of a {} {}: the simulator moves integer and FP32 elements only", op,
                          ir::DataTypeName(dtype), what));
}

// I32 marks a signed integer element (sign-extended when read); F32 an FP32; Raw an unsigned one.
ElemKind Decoder::ElementKind(ir::DataType dtype) {
  if (dtype == ir::DataType::FP32) return ElemKind::F32;
  return ir::IsInteger(dtype) && static_cast<uint8_t>(dtype) < 0x20 ? ElemKind::I32 : ElemKind::Raw;
}

// The value pl.write stores: a constant, an integer register or an FP32 scalar's bits register.
pypto::expected<ScalarOperand, std::string> Decoder::WrittenValue(const ir::ExprPtr& value, ir::DataType dtype) {
  if (dtype == ir::DataType::FP32 && value->As<ir::Var>() && !float_regs_.contains(value->As<ir::Var>()))
    return Fail(fmt::format("`{}` is an FP32 scalar the simulator does not hold; it writes FP32 values read with "
                            "pl.read, FP32 parameters and constants",
                            ir::PrintExpr(value)));
  return ScalarArg(value);
}

// `pl.write(t, [i, j], v)` into a tensor argument: the result names the tensor written.
pypto::expected<void, std::string> Decoder::DecodeTensorWrite(const ir::VarPtr& target, const ir::Call& call) {
  auto tensor = Tensor(call.args()[0], "destination of pl.write");
  if (!tensor) return Error(tensor.error());
  auto offsets = Offsets(call.args()[1], "pl.write indices");
  if (!offsets) return Error(offsets.error());
  const ir::DataType dtype = (*tensor)->dtype;
  if (auto ok = CheckElementDtype(dtype, "pl.write", "tensor"); !ok) return ok;
  Instr instr;
  instr.op = Opcode::WriteScalar;
  if (auto ok = CheckRegion(**tensor, *offsets, call.args()[1], ir::Shape(offsets->size(), 1), instr); !ok)
    return ok;
  instr.elem_bytes = static_cast<uint8_t>(ir::DataTypeBytes(dtype));
  instr.kind = ElementKind(dtype);
  auto value = WrittenValue(call.args()[2], dtype);
  if (!value) return Error(value.error());
  instr.value = *value;
  if (target) values_[target.get()] = values_.at(call.args()[0]->As<ir::Var>());
  Emit(instr);
  return {};
}

// `s = pl.read(tile, [i, j])` / `tile = pl.write(tile, [i, j], v)`: one element of a tile. A
// written tile is updated in place, so the result names the same buffer.
pypto::expected<void, std::string> Decoder::DecodeTileElement(bool write, const ir::VarPtr& target,
                                                              const ir::Call& call) {
  if (!write && !target) return {};  // a read nobody uses
  if (!write) {
    auto read = EmitTileRead(call, target->name_hint());
    if (!read) return Error(read.error());
    BindRead(target, read->reg, read->is_float);
    return {};
  }
  auto tile = Tile(call.args()[0], "destination of pl.write");
  if (!tile) return Error(tile.error());
  Instr instr;
  instr.op = Opcode::WriteTile;
  if (auto ok = TileElement(*tile, call.args()[1], "pl.write", instr); !ok) return ok;
  auto value = WrittenValue(call.args()[2], tile->dtype);
  if (!value) return Error(value.error());
  instr.value = *value;
  instr.dst = tile->ref;
  if (target) values_[target.get()] = *tile;
  Emit(instr);
  return {};
}

// `pl.read(tile, [i, j])` into a new register named `name` (an FP32's bits, or an integer).
pypto::expected<Decoder::ElementRead, std::string> Decoder::EmitTileRead(const ir::Call& call,
                                                                         const std::string& name) {
  auto tile = Tile(call.args()[0], "source of pl.read");
  if (!tile) return pypto::unexpected(tile.error());
  Instr instr;
  instr.op = Opcode::ReadTile;
  if (auto ok = TileElement(*tile, call.args()[1], "pl.read", instr); !ok)
    return pypto::unexpected(ok.error());
  instr.src0 = tile->ref;
  const bool is_float = tile->dtype == ir::DataType::FP32;
  const uint32_t reg = NewReadRegister(name, is_float);
  instr.scalar_dst = static_cast<int32_t>(reg);
  Emit(instr);
  return ElementRead{reg, is_float};
}

// The element of `tile` at `indices_expr` that `instr` (a ReadTile or WriteTile) addresses.
pypto::expected<void, std::string> Decoder::TileElement(const TileValue& tile_value, const ir::ExprPtr& indices_expr,
                                                        const char* op, Instr& instr) {
  const TileValue* tile = &tile_value;
  const bool write = instr.op == Opcode::WriteTile;
  auto indices = Offsets(indices_expr, write ? "pl.write indices" : "pl.read indices");
  if (!indices) return Error(indices.error());
  if (auto ok = CheckElementDtype(tile->dtype, op, "tile"); !ok) return ok;
  if (tile->shape.size() != indices->size() || tile->shape.size() > kMaxDims)
    return Fail(fmt::format("{} of a rank-{} tile with {} indices", op, tile->shape.size(), indices->size()));
  for (size_t d = 0; d < indices->size(); ++d) {
    const Operand& index = (*indices)[d];
    if (!index.is_reg() && (index.imm < 0 || index.imm >= tile->shape[d]))
      return Fail(fmt::format("{} index {} of dimension {} is outside the tile of shape [{}]", op, index.imm, d,
                              fmt::join(tile->shape, ", ")));
    instr.offsets[d] = index.is_reg() ? 0 : index.imm;
    instr.offset_regs[d] = index.reg;
    instr.dynamic = instr.dynamic || index.is_reg();
    instr.shape[d] = tile->shape[d];
  }
  instr.rank = static_cast<uint8_t>(indices->size());
  instr.elem_bytes = static_cast<uint8_t>(ir::DataTypeBytes(tile->dtype));
  instr.kind = ElementKind(tile->dtype);
  return {};
}

}  // namespace pypto::sim::decode
