// Compute instructions: the table of ops a Compute instruction runs, the element types each computes
// on, and the dispatch of each ComputeKind to its operand decoding (the other decode_*.cpp files).
#include "kernel_decoder.h"

#include <fmt/format.h>

#include <utility>

#include "kernels/arg_reduce.h"
#include "kernels/integer_ops.h"
#include "kernels/reduce.h"

namespace pypto::sim::decode {

std::optional<Decoder::ComputeType> Decoder::ComputeTypeOf(ir::DataType dtype) {
  switch (dtype) {
    case ir::DataType::FP32: return ComputeType{ElemKind::F32, Widen::None};
    case ir::DataType::FP16: return ComputeType{ElemKind::F32, Widen::Half};
    case ir::DataType::BF16: return ComputeType{ElemKind::F32, Widen::BFloat};
    case ir::DataType::INT32: return ComputeType{ElemKind::I32, Widen::None};
    case ir::DataType::INT16: return ComputeType{ElemKind::I32, Widen::I16};
    case ir::DataType::UINT16: return ComputeType{ElemKind::I32, Widen::U16};
    case ir::DataType::INT8: return ComputeType{ElemKind::I32, Widen::I8};
    case ir::DataType::UINT8: return ComputeType{ElemKind::I32, Widen::U8};
    default: return std::nullopt;
  }
}

// Sets how `instr` computes on `dtype` tiles, or refuses a type it cannot in `domain`.
pypto::expected<void, std::string> Decoder::SetComputeType(const std::string& op, ir::DataType dtype, Domain domain,
                                                           Instr& instr) const {
  auto type = ComputeTypeOf(dtype);
  if (!type && domain == Domain::Wrapping && dtype == ir::DataType::UINT32)
    type = ComputeType{ElemKind::I32, Widen::None};
  if (!type || (domain == Domain::Float && type->kind != ElemKind::F32)) {
    const char* supported = domain == Domain::Float ? "FP32, FP16 and BF16"
                            : dtype == ir::DataType::UINT32
                                ? "FP32, FP16, BF16, INT32 and 8- and 16-bit integers; UINT32 only for the ops "
                                  "whose result does not depend on signedness: add, sub, mul, neg, sums and "
                                  "broadcasts"
                                : "FP32, FP16, BF16, INT32 and 8- and 16-bit integers";
    return Fail(fmt::format("{} on {} tiles is not supported yet by the simulator (it computes on {})", op,
                            ir::DataTypeName(dtype), supported));
  }
  instr.kind = type->kind;
  instr.widen = type->widen;
  return {};
}

const Decoder::ComputeSpec* Decoder::FindComputeSpec(const std::string& name) {
  static const std::unordered_map<std::string, ComputeSpec> kSpecs = [] {
    std::unordered_map<std::string, ComputeSpec> specs;
    auto put = [&](const std::string& op, ComputeKind kind, auto sub) {
      specs[op] = ComputeSpec{kind, static_cast<uint8_t>(sub)};
    };
    const std::pair<const char*, BinaryOp> binary[] = {{"add", BinaryOp::Add}, {"sub", BinaryOp::Sub},
                                                       {"mul", BinaryOp::Mul}, {"div", BinaryOp::Div},
                                                       {"max", BinaryOp::Max}, {"min", BinaryOp::Min}};
    for (const auto& [name, op] : binary) {
      put(fmt::format("tile.row_expand_{}", name), ComputeKind::RowExpand, op);
      put(fmt::format("tile.col_expand_{}", name), ComputeKind::ColExpand, op);
    }
    put("tile.maximum", ComputeKind::Binary, BinaryOp::Max);
    put("tile.minimum", ComputeKind::Binary, BinaryOp::Min);
    put("tile.fmod", ComputeKind::Binary, BinaryOp::Fmod);
    put("tile.fmods", ComputeKind::BinaryScalar, BinaryOp::Fmod);
    put("tile.cmp", ComputeKind::Compare, 0);
    put("tile.cmps", ComputeKind::Compare, 0);
    put("tile.sel", ComputeKind::Select, 0);
    put("tile.sels", ComputeKind::Select, 0);
    put("tile.prelu", ComputeKind::Prelu, 0);
    const std::pair<const char*, BinaryOp> partial[] = {{"part_add", BinaryOp::Add},
                                                        {"part_mul", BinaryOp::Mul},
                                                        {"part_max", BinaryOp::Max},
                                                        {"part_min", BinaryOp::Min}};
    for (const auto& [name, op] : partial) put(fmt::format("tile.{}", name), ComputeKind::PartialBinary, op);
    put("tile.tri", ComputeKind::Triangle, 0);
    const std::pair<const char*, BinaryOp> scalar[] = {{"adds", BinaryOp::Add},     {"subs", BinaryOp::Sub},
                                                       {"muls", BinaryOp::Mul},     {"divs", BinaryOp::Div},
                                                       {"maximums", BinaryOp::Max}, {"minimums", BinaryOp::Min}};
    for (const auto& [name, op] : scalar) put(fmt::format("tile.{}", name), ComputeKind::BinaryScalar, op);
    const std::pair<const char*, UnaryOp> unary[] = {
        {"exp", UnaryOp::Exp},     {"log", UnaryOp::Log},   {"sqrt", UnaryOp::Sqrt}, {"rsqrt", UnaryOp::Rsqrt},
        {"recip", UnaryOp::Recip}, {"relu", UnaryOp::Relu}, {"abs", UnaryOp::Abs},   {"neg", UnaryOp::Neg},
        {"sin", UnaryOp::Sin},     {"cos", UnaryOp::Cos}};
    for (const auto& [name, op] : unary) put(fmt::format("tile.{}", name), ComputeKind::Unary, op);
    put("tile.lrelu", ComputeKind::LeakyRelu, 0);
    put("tile.not", ComputeKind::BitNot, 0);
    const std::pair<const char*, IntegerOp> integer[] = {{"and", IntegerOp::And}, {"or", IntegerOp::Or},
                                                         {"xor", IntegerOp::Xor}, {"shl", IntegerOp::Shl},
                                                         {"shr", IntegerOp::Shr}, {"rem", IntegerOp::Rem}};
    for (const auto& [name, op] : integer) {
      put(fmt::format("tile.{}", name), ComputeKind::IntegerBinary, op);
      put(fmt::format("tile.{}s", name), ComputeKind::IntegerBinary, op);
    }
    const std::pair<const char*, ReduceOp> reduce[] = {
        {"sum", ReduceOp::Sum}, {"max", ReduceOp::Max}, {"min", ReduceOp::Min}, {"prod", ReduceOp::Prod}};
    for (const auto& [name, op] : reduce) {
      put(fmt::format("tile.row_{}", name), ComputeKind::RowReduce, op);
      put(fmt::format("tile.col_{}", name), ComputeKind::ColReduce, op);
    }
    for (const auto& [name, op] : {std::pair{"max", ArgReduceOp::Max}, std::pair{"min", ArgReduceOp::Min}}) {
      put(fmt::format("tile.row_arg{}", name), ComputeKind::RowArgReduce, op);
      put(fmt::format("tile.col_arg{}", name), ComputeKind::ColArgReduce, op);
    }
    put("tile.row_expand_expdif", ComputeKind::RowExpDif, 0);
    put("tile.col_expand_expdif", ComputeKind::ColExpDif, 0);
    put("tile.row_expand", ComputeKind::RowBroadcast, 0);
    put("tile.col_expand", ComputeKind::ColBroadcast, 0);
    put("tile.full", ComputeKind::Fill, 0);
    put("tile.expands", ComputeKind::Fill, 0);
    put("tile.move", ComputeKind::Copy, 0);
    put("tile.reshape", ComputeKind::Copy, 0);
    put("tile.reinterpret_view", ComputeKind::Copy, 0);
    put("tile.matmul", ComputeKind::Matmul, kMatmulPlain);
    put("tile.matmul_acc", ComputeKind::Matmul, kMatmulAcc);
    put("tile.matmul_bias", ComputeKind::Matmul, kMatmulBias);
    put("tile.gemv", ComputeKind::Matmul, kMatmulPlain);
    put("tile.gemv_acc", ComputeKind::Matmul, kMatmulAcc);
    put("tile.gemv_bias", ComputeKind::Matmul, kMatmulBias);
    put("tile.matmul_mx", ComputeKind::MatmulMx, kMatmulPlain);
    put("tile.matmul_mx_acc", ComputeKind::MatmulMx, kMatmulAcc);
    put("tile.matmul_mx_bias", ComputeKind::MatmulMx, kMatmulBias);
    put("tile.cast", ComputeKind::Cast, 0);
    put("tile.sort32", ComputeKind::Sort32, 0);
    put("tile.mrgsort_format1", ComputeKind::MergeSort, 0);
    put("tile.mrgsort_format2", ComputeKind::MergeLists, 0);
    put("tile.gather_mask", ComputeKind::GatherMask, 0);
    put("tile.gather", ComputeKind::GatherAlong, 0);
    put("tile.gather_dim", ComputeKind::GatherAlong, 0);
    put("tile.scatter", ComputeKind::ScatterAlong, 0);
    put("tile.scatter_dim", ComputeKind::ScatterAlong, 0);
    put("tile.scatter_mask", ComputeKind::ScatterLanes, 0);
    put("tile.scatter_update", ComputeKind::ScatterRows, 0);
    put("tile.gather_compare", ComputeKind::GatherCompare, 0);
    put("tile.gatherb", ComputeKind::GatherBlocks, 0);
    put("tile.gather_compare_count", ComputeKind::GatherCompare, 0);
    put("tile.random", ComputeKind::Random, 0);
    put("tile.slice", ComputeKind::Slice, 0);
    put("tile.extract", ComputeKind::Slice, 0);
    put("tile.assemble", ComputeKind::Insert, 0);
    put("tile.concat", ComputeKind::Concat, 0);
    put("tile.transpose", ComputeKind::Transpose, 0);
    put("tile.transpose_view", ComputeKind::Transpose, 0);
    put("tile.ci", ComputeKind::Arange, 0);
    put("tile.fillpad", ComputeKind::FillPad, 0);
    put("tile.fillpad_inplace", ComputeKind::FillPad, 0);
    put("tile.fillpad_expand", ComputeKind::FillPadExpand, 0);
    return specs;
  }();
  auto it = kSpecs.find(name);
  return it == kSpecs.end() ? nullptr : &it->second;
}

// Decodes the ops a Compute instruction runs, tile.create (which only names a buffer), and
// tile.reshape of a tile in place (which only renames one); nullopt for any other op.
std::optional<pypto::expected<void, std::string>> Decoder::DecodeCompute(const std::string& op,
                                                                         const ir::VarPtr& target,
                                                                         const ir::Call& call) {
  // set_validshape restates the region of the tile's own buffer: nothing runs.
  if (op == "tile.create" || op == "tile.set_validshape") {
    auto tile = ResultTile(target, op.c_str());
    if (!tile) return Error(tile.error());
    values_[target.get()] = *tile;
    return pypto::expected<void, std::string>{};
  }
  if (op == "tile.slice" && IsSliceView(target, call)) return DecodeSliceView(target, call);
  const ComputeSpec* spec = FindComputeSpec(op);
  if (!spec) return std::nullopt;
  auto out = ResultTile(target, op.c_str());
  if (!out) return Error(out.error());
  AdoptAliasedView(target, call, *out);
  Instr instr;
  instr.op = Opcode::Compute;
  instr.dst = out->ref;
  instr.num_elements = out->num_elements;
  instr.elem_bytes = static_cast<uint8_t>(ir::DataTypeBytes(out->dtype));
  instr.kind = KindOf(out->dtype);
  ComputeInfo& info = instr.compute;
  info.kind = spec->kind;
  info.op = spec->op;
  if (auto ok = DecodeComputeOperands(op, *out, call, instr); !ok) return Error(ok.error());
  values_[target.get()] = *out;
  // A reshape or move onto its own storage changes nothing at run time.
  if (info.kind == ComputeKind::Copy && instr.src0.space == instr.dst.space &&
      instr.src0.byte_offset == instr.dst.byte_offset)
    return pypto::expected<void, std::string>{};
  Emit(instr);
  return pypto::expected<void, std::string>{};
}

// Arithmetic runs on FP32 and INT32 tiles (others are moved and converted, not computed on).
pypto::expected<void, std::string> Decoder::RequireArithmetic(const std::string& op, const TileValue& tile,
                                                              bool float_only) const {
  const ElemKind kind = KindOf(tile.dtype);
  if (kind == ElemKind::F32 || (!float_only && kind == ElemKind::I32)) return {};
  return Fail(fmt::format("{} on {} tiles is not supported yet by the simulator (it computes on FP32{})", op,
                          ir::DataTypeName(tile.dtype), float_only ? " and FP16" : ", FP16 and INT32"));
}

// The domain of an element-wise Binary, BinaryScalar, Unary or LeakyRelu op.
Decoder::Domain Decoder::ElementwiseDomain(const ComputeInfo& info) {
  switch (info.kind) {
    case ComputeKind::LeakyRelu:
    case ComputeKind::Prelu: return Domain::Float;
    case ComputeKind::Unary:
      switch (static_cast<UnaryOp>(info.op)) {
        case UnaryOp::Neg: return Domain::Wrapping;
        case UnaryOp::Relu:
        case UnaryOp::Abs: return Domain::Arith;
        default: return Domain::Float;
      }
    default: return Wraps(static_cast<BinaryOp>(info.op)) ? Domain::Wrapping : Domain::Arith;
  }
}

// The domain of a row/column expand or broadcast (a broadcast only copies).
Decoder::Domain Decoder::ExpandDomain(const ComputeInfo& info) {
  switch (info.kind) {
    case ComputeKind::RowExpDif:
    case ComputeKind::ColExpDif: return Domain::Float;
    case ComputeKind::RowBroadcast:
    case ComputeKind::ColBroadcast: return Domain::Wrapping;
    default: return Wraps(static_cast<BinaryOp>(info.op)) ? Domain::Wrapping : Domain::Arith;
  }
}

pypto::expected<void, std::string> Decoder::DecodeComputeOperands(const std::string& op, const TileValue& out,
                                                                  const ir::Call& call, Instr& instr) {
  ComputeInfo& info = instr.compute;
  const auto& args = call.args();
  auto tile_arg = [&](size_t i, const char* role) { return Tile(args[i], role); };
  auto matrix = [&](const TileValue& tile) {
    info.rows = tile.rows();
    info.cols = tile.cols();
  };
  switch (info.kind) {
    case ComputeKind::Binary:
    case ComputeKind::Prelu:
    case ComputeKind::Unary:
    case ComputeKind::LeakyRelu:
    case ComputeKind::BinaryScalar: {
      auto src = tile_arg(0, "operand");
      if (!src) return Error(src.error());
      if (auto ok = SetComputeType(op, out.dtype, ElementwiseDomain(info), instr); !ok) return ok;
      if (auto ok = SameSize(*src, out); !ok) return ok;
      instr.src0 = src->ref;
      if (info.kind == ComputeKind::Binary || info.kind == ComputeKind::Prelu) {
        auto rhs = tile_arg(1, info.kind == ComputeKind::Prelu ? "slope" : "right operand");
        if (!rhs) return Error(rhs.error());
        if (auto ok = SameSize(*rhs, out); !ok) return ok;
        instr.src1 = rhs->ref;
      } else if (info.kind == ComputeKind::BinaryScalar || info.kind == ComputeKind::LeakyRelu) {
        auto scalar = ScalarArg(args[1]);
        if (!scalar) return Error(scalar.error());
        info.scalar = *scalar;
      }
      return {};
    }
    case ComputeKind::RowReduce:
    case ComputeKind::ColReduce: {
      auto src = tile_arg(0, "operand");
      if (!src) return Error(src.error());
      const Domain domain = static_cast<ReduceOp>(info.op) == ReduceOp::Sum ? Domain::Wrapping : Domain::Arith;
      if (auto ok = SetComputeType(op, out.dtype, domain, instr); !ok) return ok;
      instr.src0 = src->ref;
      matrix(*src);
      info.pairwise = args.size() > 1;
      return NarrowTo(args[0]->type(), instr);
    }
    case ComputeKind::RowArgReduce:
    case ComputeKind::ColArgReduce: {  // FP16 or FP32 values (type deduction checked), INT32 indices
      auto src = tile_arg(0, "operand");
      if (!src) return Error(src.error());
      instr.src0 = src->ref;
      info.in_dtype = src->dtype;
      matrix(*src);
      return NarrowTo(args[0]->type(), instr);
    }
    case ComputeKind::FillPad: return DecodeFillPad(call, instr);
    case ComputeKind::FillPadExpand: return DecodeFillPadExpand(out, call, instr);
    case ComputeKind::Compare: return DecodeCompare(op, out, call, instr);
    case ComputeKind::Select: {
      if (op == "tile.sels") return DecodeSelectScalar(out, call, instr);
      auto mask = tile_arg(0, "mask");
      if (!mask) return Error(mask.error());
      auto lhs = tile_arg(1, "left operand");
      if (!lhs) return Error(lhs.error());
      auto rhs = tile_arg(2, "right operand");
      if (!rhs) return Error(rhs.error());
      if (auto ok = SameSize(*lhs, out); !ok) return ok;
      if (auto ok = SameSize(*rhs, out); !ok) return ok;
      instr.src2 = mask->ref;
      instr.src0 = lhs->ref;
      instr.src1 = rhs->ref;
      matrix(out);
      info.mask_row_bytes = mask->cols() * static_cast<int64_t>(ir::DataTypeBytes(mask->dtype));
      return {};
    }
    case ComputeKind::BitNot: {
      auto src = tile_arg(0, "operand");
      if (!src) return Error(src.error());
      if (!ir::IsInteger(out.dtype))
        return Fail(fmt::format("{} inverts the bits of integer tiles, got {}", op, ir::DataTypeName(out.dtype)));
      if (auto ok = SameSize(*src, out); !ok) return ok;
      instr.src0 = src->ref;
      return {};
    }
    case ComputeKind::IntegerBinary: return DecodeIntegerBinary(op, out, call, instr);
    case ComputeKind::RowExpand:
    case ComputeKind::ColExpand:
    case ComputeKind::RowExpDif:
    case ComputeKind::ColExpDif:
    case ComputeKind::RowBroadcast:
    case ComputeKind::ColBroadcast: {
      auto src = tile_arg(0, "tile operand");
      if (!src) return Error(src.error());
      auto vec = tile_arg(1, "vector operand");
      if (!vec) return Error(vec.error());
      if (auto ok = SetComputeType(op, out.dtype, ExpandDomain(info), instr); !ok) return ok;
      instr.src0 = src->ref;
      instr.src1 = vec->ref;
      matrix(out);
      if (info.kind == ComputeKind::RowExpand) info.vec_lanes = vec->cols();
      return {};
    }
    case ComputeKind::Fill: {
      if (KindOf(out.dtype) == ElemKind::Raw) return DecodeFillBits(op, out, args[1], instr);
      auto scalar = ScalarArg(args[1]);
      if (!scalar) return Error(scalar.error());
      if (auto ok = RequireArithmetic(op, out, false); !ok) return ok;
      info.scalar = *scalar;
      return {};
    }
    case ComputeKind::Copy: {
      auto src = tile_arg(0, "source");
      if (!src) return Error(src.error());
      // A reinterpreted view is the same bytes as elements of another size: only the byte counts agree.
      const auto bytes = [](const TileValue& tile) {
        return tile.num_elements * static_cast<int64_t>(ir::DataTypeBytes(tile.dtype));
      };
      if (op == "tile.reinterpret_view") {
        if (bytes(*src) != bytes(out))
          return Fail(fmt::format("{} views {} bytes as {}", op, bytes(*src), bytes(out)));
      } else if (auto ok = SameSize(*src, out); !ok) {
        return ok;
      }
      instr.src0 = src->ref;
      return {};
    }
    case ComputeKind::Matmul: return DecodeMatmul(op, out, call, instr);
    case ComputeKind::MatmulMx: return DecodeMatmulMx(op, out, call, instr);
    case ComputeKind::Cast: return DecodeCast(op, out, call, instr);
    case ComputeKind::Sort32:
    case ComputeKind::MergeSort:
    case ComputeKind::GatherMask:
    case ComputeKind::Concat:
    case ComputeKind::Transpose:
    case ComputeKind::Arange: return DecodeTopKFamily(op, out, call, instr);
    case ComputeKind::GatherAlong:
    case ComputeKind::ScatterAlong:
    case ComputeKind::ScatterLanes:
    case ComputeKind::ScatterRows: return DecodeIndexMove(op, out, call, instr);
    case ComputeKind::GatherCompare: return DecodeGatherCompare(op, call, instr);
    case ComputeKind::GatherBlocks: return DecodeGatherBlocks(out, call, instr);
    case ComputeKind::Random: return DecodeRandom(out, call, instr);
    case ComputeKind::MergeLists: return DecodeMergeLists(out, call, instr);
    case ComputeKind::Slice:
    case ComputeKind::Insert: return DecodeWindow(op, out, call, instr);
    case ComputeKind::PartialBinary: return DecodePartialBinary(op, out, call, instr);
    case ComputeKind::Triangle: return DecodeTriangle(out, call, instr);
  }
  return Fail("unknown compute op (decoder bug)");
}

}  // namespace pypto::sim::decode
