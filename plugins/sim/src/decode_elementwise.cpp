// Decoding element-wise tile ops: binary and three-operand arithmetic, integer ops, comparisons and
// selects, fills and pads, generators (tri, random) and casts. Separate from the op table and matmul.
#include "kernel_decoder.h"

#include <fmt/format.h>

#include <utility>

#include "kernels/integer_ops.h"
#include "kernels/mx_formats.h"
#include "pad_value.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"

namespace pypto::sim::decode {

pypto::expected<void, std::string> Decoder::DecodeBinary(Opcode op, const ir::VarPtr& target, const ir::Call& call) {
  const std::string& name = call.op()->name;
  if (call.args().size() != 2) return Fail(fmt::format("{} takes two tiles", name));
  auto lhs = Tile(call.args()[0], "left operand");
  if (!lhs) return Error(lhs.error());
  auto rhs = Tile(call.args()[1], "right operand");
  if (!rhs) return Error(rhs.error());
  auto out = ResultTile(target, name.c_str());
  if (!out) return Error(out.error());
  if (lhs->dtype != rhs->dtype || lhs->dtype != out->dtype || lhs->num_elements != rhs->num_elements ||
      lhs->num_elements != out->num_elements) {
    return Fail(fmt::format("operands and result differ in dtype or size: {} x {}, {} x {} -> {} x {}",
                            lhs->num_elements, ir::DataTypeName(lhs->dtype), rhs->num_elements,
                            ir::DataTypeName(rhs->dtype), out->num_elements, ir::DataTypeName(out->dtype)));
  }
  Instr instr;
  const Domain domain = op == Opcode::Div ? Domain::Arith : Domain::Wrapping;
  if (auto ok = SetComputeType(name, out->dtype, domain, instr); !ok) return ok;
  // In-place reuse means the same place; a partial overlap is an allocation bug.
  for (const TileValue* src : {&*lhs, &*rhs}) {
    if (Overlap(out->ref, src->ref) && out->ref.byte_offset != src->ref.byte_offset) {
      return Fail(fmt::format("result tile '{}' at [{}, {}) partially overlaps an operand at [{}, {}) of {}",
                              target->name_hint(), out->ref.byte_offset, out->ref.byte_offset + out->ref.bytes,
                              src->ref.byte_offset, src->ref.byte_offset + src->ref.bytes,
                              ir::MemorySpaceName(src->ref.space)));
    }
  }
  instr.op = op;
  instr.elem_bytes = static_cast<uint8_t>(ir::DataTypeBytes(out->dtype));
  instr.dst = out->ref;
  instr.src0 = lhs->ref;
  instr.src1 = rhs->ref;
  instr.num_elements = out->num_elements;
  values_[target.get()] = *out;
  Emit(instr);
  return {};
}

// `tile.addc` / `subc` / `addsc` / `subsc`: lhs plus or minus rhs (a tile, or a scalar for the sc
// forms), then plus rhs2; two element-wise steps, as the PTO instructions are made of (TADDC is two
// TADDs, TSUBC a TSUB and a TADD), so an FP16 result is rounded after each as on the device.
pypto::expected<void, std::string> Decoder::DecodeThreeOperand(const std::string& op, const ir::VarPtr& target,
                                                               const ir::Call& call) {
  const auto& args = call.args();
  const bool scalar_middle = op.ends_with("sc");
  auto out = ResultTile(target, op.c_str());
  if (!out) return Error(out.error());
  auto lhs = Tile(args[0], "left operand");
  if (!lhs) return Error(lhs.error());
  auto third = Tile(args[2], "third operand");
  if (!third) return Error(third.error());
  for (const TileValue* src : {&*lhs, &*third}) {
    if (auto ok = SameSize(*src, *out); !ok) return ok;
  }
  // The second step reads the third operand after the first has written the result.
  if (Overlap(out->ref, third->ref))
    return Fail(fmt::format("the result tile '{}' of {} shares the buffer of its third operand, which the "
                            "instruction reads after writing the result",
                            target->name_hint(), op));
  Instr first;
  first.op = Opcode::Compute;
  first.dst = out->ref;
  first.num_elements = out->num_elements;
  first.elem_bytes = static_cast<uint8_t>(ir::DataTypeBytes(out->dtype));
  if (auto ok = SetComputeType(op, out->dtype, Domain::Wrapping, first); !ok) return ok;
  first.compute.op = static_cast<uint8_t>(op.starts_with("tile.sub") ? BinaryOp::Sub : BinaryOp::Add);
  first.src0 = lhs->ref;
  if (scalar_middle) {
    auto scalar = ScalarArg(args[1]);
    if (!scalar) return Error(scalar.error());
    first.compute.kind = ComputeKind::BinaryScalar;
    first.compute.scalar = *scalar;
  } else {
    auto rhs = Tile(args[1], "right operand");
    if (!rhs) return Error(rhs.error());
    if (auto ok = SameSize(*rhs, *out); !ok) return ok;
    first.compute.kind = ComputeKind::Binary;
    first.src1 = rhs->ref;
  }
  Instr second = first;
  second.compute.kind = ComputeKind::Binary;
  second.compute.op = static_cast<uint8_t>(BinaryOp::Add);
  second.src0 = out->ref;
  second.src1 = third->ref;
  Emit(first);
  Emit(second);
  values_[target.get()] = *out;
  return {};
}

// `pl.tile.fillpad(t, pad_value=...)`: a copy of t whose elements outside t's valid region hold
// the pad value, fixed here as a bit pattern of the element type.
pypto::expected<void, std::string> Decoder::DecodeFillPad(const ir::Call& call, Instr& instr) {
  auto src = Tile(call.args()[0], "operand");
  if (!src) return Error(src.error());
  auto mode = ir::FindAttr<std::string>(call.kwargs(), "pad_value").value_or("zero");
  auto bits = PadBits(src->dtype, mode);
  if (!bits)
    return Fail(fmt::format("fillpad of a {} tile is not supported by the simulator yet",
                            ir::DataTypeName(src->dtype)));
  instr.src0 = src->ref;
  instr.compute.rows = src->rows();
  instr.compute.cols = src->cols();
  instr.compute.pad_bits = *bits;
  if (auto ok = NarrowTo(call.args()[0]->type(), instr); !ok) return ok;
  if (!instr.partial) {  // the whole tile is valid: a plain copy
    instr.compute.kind = ComputeKind::Copy;
    instr.compute.rows = instr.compute.cols = 0;
  }
  return {};
}

// `pl.tile.fillpad_expand(t, shape, pad_value=...)`: t's valid region into the top-left corner of a
// larger tile, the pad value (a bit pattern of the element type) everywhere else.
pypto::expected<void, std::string> Decoder::DecodeFillPadExpand(const TileValue& out, const ir::Call& call,
                                                                Instr& instr) {
  auto src = Tile(call.args()[0], "operand");
  if (!src) return Error(src.error());
  auto mode = ir::FindAttr<std::string>(call.kwargs(), "pad_value").value_or("zero");
  auto bits = PadBits(src->dtype, mode);
  if (!bits)
    return Fail(fmt::format("fillpad_expand of a {} tile is not supported by the simulator yet",
                            ir::DataTypeName(src->dtype)));
  ComputeInfo& info = instr.compute;
  instr.src0 = src->ref;
  info.rows = src->rows();
  info.cols = src->cols();
  info.outer_rows = out.rows();
  info.outer_cols = out.cols();
  info.pad_bits = *bits;
  if (auto ok = NarrowTo(call.args()[0]->type(), instr); !ok) return ok;
  if (!instr.partial) {  // the whole source is copied
    instr.partial = true;
    instr.valid = ValidRegion{Operand::Imm(info.rows), Operand::Imm(info.cols)};
  }
  return {};
}

// `pl.tile.cmp(a, b, cmp_type=k)` / `pl.tile.cmps(a, s, cmp_type=k)`: the packed predicate mask of
// comparing a's elements (compared in a's compute type, see ComputeTypeOf) into the UINT8 result.
pypto::expected<void, std::string> Decoder::DecodeCompare(const std::string& op, const TileValue& out,
                                                          const ir::Call& call, Instr& instr) {
  ComputeInfo& info = instr.compute;
  auto lhs = Tile(call.args()[0], "left operand");
  if (!lhs) return Error(lhs.error());
  Instr operand_type;
  if (auto ok = SetComputeType(op, lhs->dtype, Domain::Arith, operand_type); !ok) return ok;
  instr.src0 = lhs->ref;
  info.in_dtype = lhs->dtype;
  info.rows = lhs->rows();
  info.cols = lhs->cols();
  info.mask_row_bytes = out.cols();
  info.op = static_cast<uint8_t>(ir::FindAttr<int64_t>(call.kwargs(), "cmp_type").value_or(0));
  if (op == "tile.cmp") {
    auto rhs = Tile(call.args()[1], "right operand");
    if (!rhs) return Error(rhs.error());
    if (auto ok = SameSize(*rhs, *lhs); !ok) return ok;
    instr.src1 = rhs->ref;
    return {};
  }
  auto scalar = ScalarArg(call.args()[1]);
  if (!scalar) return Error(scalar.error());
  info.scalar = *scalar;
  return {};
}

// `pl.full(shape, dtype=pl.BF16, value=0.0)`: a tile of a type without arithmetic is filled with
// the constant's bit pattern.
pypto::expected<void, std::string> Decoder::DecodeFillBits(const std::string& op, const TileValue& out,
                                                           const ir::ExprPtr& value, Instr& instr) const {
  std::optional<double> constant;
  if (const auto* f = value->As<ir::ConstFloat>()) constant = f->value();
  if (const auto* i = value->As<ir::ConstInt>()) constant = static_cast<double>(i->value());
  auto bits = constant ? ValueBits(out.dtype, *constant) : std::nullopt;
  if (!bits)
    return Fail(fmt::format("{} of a {} tile is supported by the simulator with a constant value only, got `{}`",
                            op, ir::DataTypeName(out.dtype), ir::PrintExpr(value)));
  instr.compute.kind = ComputeKind::FillBits;
  instr.compute.pad_bits = *bits;
  return {};
}

// `pl.tile.and(a, b)`, `pl.tile.shls(a, 3)`, `pl.tile.rem(a, b, tmp)` and their kin. An integer
// tile's op runs at its own width and signedness over the result's valid region; a floating-point
// tile's rem is the element-wise kernels' Rem. The scratch tile is the device instruction's and
// plays no part here.
pypto::expected<void, std::string> Decoder::DecodeIntegerBinary(const std::string& op, const TileValue& out,
                                                                const ir::Call& call, Instr& instr) {
  ComputeInfo& info = instr.compute;
  const bool scalar_rhs = call.args()[1]->type()->As<ir::ScalarType>() != nullptr;
  if (ir::IsFloat(out.dtype) && static_cast<IntegerOp>(info.op) == IntegerOp::Rem) {
    info.kind = scalar_rhs ? ComputeKind::BinaryScalar : ComputeKind::Binary;
    info.op = static_cast<uint8_t>(BinaryOp::Rem);
    return DecodeComputeOperands(op, out, call, instr);
  }
  const int bits = ir::IsInteger(out.dtype) ? ir::DataTypeBits(out.dtype) : 0;
  if (bits != 8 && bits != 16 && bits != 32 && bits != 64)
    return Fail(fmt::format("{} on {} tiles is not supported by the simulator (it computes on 8- to 64-bit "
                            "integers)",
                            op, ir::DataTypeName(out.dtype)));
  auto src = Tile(call.args()[0], "left operand");
  if (!src) return Error(src.error());
  if (auto ok = SameSize(*src, out); !ok) return ok;
  instr.src0 = src->ref;
  if (scalar_rhs) {
    auto scalar = ScalarArg(call.args()[1]);
    if (!scalar) return Error(scalar.error());
    info.scalar = *scalar;
  } else {
    auto rhs = Tile(call.args()[1], "right operand");
    if (!rhs) return Error(rhs.error());
    if (auto ok = SameSize(*rhs, out); !ok) return ok;
    instr.src1 = rhs->ref;
  }
  info.out_dtype = out.dtype;
  info.rows = out.rows();
  info.cols = out.cols();
  return NarrowTo(call.type(), instr);
}

// `pl.tile.sels(mask, src, tmp, scalar)`: src where the mask's bit is set, the scalar elsewhere. The
// scalar becomes an element of src's type when the instruction runs (it may be computed); the
// scratch tile is the device instruction's and plays no part here.
pypto::expected<void, std::string> Decoder::DecodeSelectScalar(const TileValue& out, const ir::Call& call,
                                                               Instr& instr) {
  auto mask = Tile(call.args()[0], "mask");
  if (!mask) return Error(mask.error());
  auto src = Tile(call.args()[1], "source");
  if (!src) return Error(src.error());
  if (auto ok = SameSize(*src, out); !ok) return ok;
  if (!ValueBits(out.dtype, 0))
    return Fail(fmt::format("tile.sels of a {} tile is not supported by the simulator", ir::DataTypeName(out.dtype)));
  auto scalar = ScalarArg(call.args()[3]);
  if (!scalar) return Error(scalar.error());
  ComputeInfo& info = instr.compute;
  instr.src2 = mask->ref;
  instr.src0 = src->ref;
  info.scalar = *scalar;
  info.out_dtype = out.dtype;
  info.rows = out.rows();
  info.cols = out.cols();
  info.mask_row_bytes = mask->cols() * static_cast<int64_t>(ir::DataTypeBytes(mask->dtype));
  return {};
}

// `pl.tile.part_add(src0, src1)` and its kin: the op where src1 is valid, src0 elsewhere; src1's
// valid region is read when the instruction runs.
pypto::expected<void, std::string> Decoder::DecodePartialBinary(const std::string& op, const TileValue& out,
                                                                const ir::Call& call, Instr& instr) {
  auto src0 = Tile(call.args()[0], "first operand");
  if (!src0) return Error(src0.error());
  auto src1 = Tile(call.args()[1], "second operand");
  if (!src1) return Error(src1.error());
  const Domain domain = Wraps(static_cast<BinaryOp>(instr.compute.op)) ? Domain::Wrapping : Domain::Arith;
  if (auto ok = SetComputeType(op, out.dtype, domain, instr); !ok) return ok;
  if (auto ok = SameSize(*src0, out); !ok) return ok;
  if (auto ok = SameSize(*src1, out); !ok) return ok;
  instr.src0 = src0->ref;
  instr.src1 = src1->ref;
  instr.compute.rows = out.rows();
  instr.compute.cols = out.cols();
  return NarrowTo(call.args()[1]->type(), instr);
}

// `pl.tile.tri(diagonal, shape, valid_shape=..., dtype=..., upper=...)`: ones on one side of the
// diagonal over the valid region, as the element type's bit pattern; the diagonal may be computed.
pypto::expected<void, std::string> Decoder::DecodeTriangle(const TileValue& out, const ir::Call& call, Instr& instr) {
  ComputeInfo& info = instr.compute;
  auto one = ValueBits(out.dtype, 1.0);
  if (!one)
    return Fail(fmt::format("pl.tile.tri of a {} tile is not supported by the simulator",
                            ir::DataTypeName(out.dtype)));
  auto diagonal = ScalarArg(call.args()[0]);
  if (!diagonal) return Error(diagonal.error());
  info.scalar = *diagonal;
  info.op = ir::FindAttr<bool>(call.kwargs(), "upper").value_or(false) ? 1 : 0;
  info.pad_bits = *one;
  info.rows = out.rows();
  info.cols = out.cols();
  return NarrowTo(call.type(), instr);
}

pypto::expected<void, std::string> Decoder::DecodeCast(const std::string& op, const TileValue& out,
                                                       const ir::Call& call, Instr& instr) {
  auto src = Tile(call.args()[0], "operand");
  if (!src) return Error(src.error());
  // FP4 and FP8 convert through FP32 (kernels/mx_formats.h), to and from any type ToElemType knows.
  const auto known = [](ir::DataType dtype) { return ToElemType(dtype) || IsMxFormat(dtype); };
  if (!known(src->dtype) || !known(out.dtype)) {
    return Fail(fmt::format("{} from {} to {} is not supported yet by the simulator", op,
                            ir::DataTypeName(src->dtype), ir::DataTypeName(out.dtype)));
  }
  instr.src0 = src->ref;
  instr.compute.in_dtype = src->dtype;
  instr.compute.out_dtype = out.dtype;
  static const std::pair<const char*, RoundMode> kModes[] = {
      {"none", RoundMode::None},   {"rint", RoundMode::Rint},   {"round", RoundMode::Round},
      {"floor", RoundMode::Floor}, {"ceil", RoundMode::Ceil},   {"trunc", RoundMode::Trunc},
      {"odd", RoundMode::Odd}};
  const std::string mode = ir::FindAttr<std::string>(call.kwargs(), "mode").value_or("round");
  for (const auto& [name, value] : kModes)
    if (mode == name) instr.compute.round_mode = static_cast<uint8_t>(value);
  return {};
}

// pl.random: the six seeds (constants or registers), rounds, and the valid region filled.
pypto::expected<void, std::string> Decoder::DecodeRandom(const TileValue& out, const ir::Call& call, Instr& instr) {
  ComputeInfo& info = instr.compute;
  for (size_t i = 0; i < info.seeds.size(); ++i) {
    auto seed = ScalarArg(call.args()[i]);
    if (!seed) return Error(seed.error());
    info.seeds[i] = *seed;
  }
  info.rounds = static_cast<uint8_t>(ir::FindAttr<int64_t>(call.kwargs(), "rounds").value_or(10));
  info.rows = out.rows();
  info.cols = out.cols();
  return NarrowTo(call.type(), instr);
}

std::optional<ElemType> Decoder::ToElemType(ir::DataType dtype) {
  switch (dtype) {
    case ir::DataType::FP32: return ElemType::F32;
    case ir::DataType::FP16: return ElemType::F16;
    case ir::DataType::BF16: return ElemType::BF16;
    case ir::DataType::INT32: return ElemType::I32;
    case ir::DataType::INT16: return ElemType::I16;
    case ir::DataType::INT8: return ElemType::I8;
    case ir::DataType::UINT8: return ElemType::U8;
    default: return std::nullopt;
  }
}

}  // namespace pypto::sim::decode
