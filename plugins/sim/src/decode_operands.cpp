// The Decoder's shared operand plumbing: new registers, error messages, instruction emission, and
// resolving tensor, tile, region and valid-region operands, which every op decoder uses.
#include "kernel_decoder.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>

#include "pypto/ir/dynamic_extent.h"
#include "pypto/ir/printer.h"
#include "pypto/runtime/dtype_code.h"

namespace pypto::sim::decode {

uint32_t Decoder::NewRegister(std::string name, std::string role) {
  kernel_.registers.push_back(RegisterInfo{std::move(name), std::move(role)});
  return static_cast<uint32_t>(kernel_.registers.size() - 1);
}

Error Decoder::Fail(const std::string& what) const {
  return Error(fmt::format("{}: kernel '{}': {} (in `{}`)", span_->str(), Name(), what, source_.text));
}

// The valid region a tile's type narrows it to, its extents as operands (scalar code computing
// them runs before the next instruction); nullopt for a tile that is valid as a whole. A rank-1
// tile is one row; a tile of higher rank is the matrix of its last two dimensions, the others 1.
pypto::expected<std::optional<ValidRegion>, std::string> Decoder::ValidRegionOf(const ir::TypePtr& type) {
  const auto* tile = type->As<ir::TileType>();
  if (!tile || !tile->has_partial_valid_shape()) return std::optional<ValidRegion>{};
  const auto& valid = tile->valid_shape();
  if (valid.size() == 1) {
    auto cols = Scalar(valid[0]);
    if (!cols) return Error(cols.error());
    return std::optional<ValidRegion>(ValidRegion{Operand::Imm(1), *cols});
  }
  const size_t row_dim = valid.size() - 2;
  for (size_t d = 0; d < row_dim; ++d) {
    if (tile->shape()[d] != 1 || ir::AsConstInt(valid[d]) != std::optional<int64_t>(1))
      return Fail(fmt::format("a valid region of {}; the simulator narrows tiles whose dimensions before the last "
                              "two are 1",
                              tile->str()));
  }
  auto rows = Scalar(valid[row_dim]);
  if (!rows) return Error(rows.error());
  auto cols = Scalar(valid[row_dim + 1]);
  if (!cols) return Error(cols.error());
  return std::optional<ValidRegion>(ValidRegion{*rows, *cols});
}

// Marks `instr` as moving or reading only the valid region of a tile of type `type`.
pypto::expected<void, std::string> Decoder::NarrowTo(const ir::TypePtr& type, Instr& instr) {
  auto valid = ValidRegionOf(type);
  if (!valid) return Error(valid.error());
  if (!*valid) return {};
  instr.partial = true;
  instr.valid = **valid;
  return {};
}

// Appends `instr`, preceded by the scalar code waiting for it; returns its index.
size_t Decoder::Emit(Instr instr) {
  for (const TileRef* ref : {&instr.dst, &instr.src0, &instr.src1, &instr.src2}) {
    if (ref->bytes == 0) continue;
    auto& mark = kernel_.high_water[static_cast<size_t>(ref->space) % kernel_.high_water.size()];
    mark = std::max(mark, ref->byte_offset + ref->bytes);
  }
  instr.scalar_begin = static_cast<uint32_t>(kernel_.scalar_code.size());
  instr.scalar_count = static_cast<uint32_t>(pending_.size());
  kernel_.scalar_code.insert(kernel_.scalar_code.end(), pending_.begin(), pending_.end());
  kernel_.scalar_text.insert(kernel_.scalar_text.end(), pending_text_.begin(), pending_text_.end());
  pending_.clear();
  pending_text_.clear();
  kernel_.code.push_back(instr);
  kernel_.sources.push_back(source_);
  return kernel_.code.size() - 1;
}

pypto::expected<const KernelParam*, std::string> Decoder::Tensor(const ir::ExprPtr& expr, const char* role) const {
  const auto* var = expr->As<ir::Var>();
  auto it = var ? values_.find(var) : values_.end();
  if (it == values_.end() || !std::holds_alternative<TensorValue>(it->second)) {
    return Fail(fmt::format("the {} must be one of the kernel's tensor parameters, got `{}`", role,
                            ir::PrintExpr(expr)));
  }
  return &kernel_.params[std::get<TensorValue>(it->second).param];
}

pypto::expected<TileValue, std::string> Decoder::Tile(const ir::ExprPtr& expr, const char* role) const {
  const auto* var = expr->As<ir::Var>();
  if (!var) return Fail(fmt::format("the {} must be a tile variable, got `{}`", role, ir::PrintExpr(expr)));
  auto it = values_.find(var);
  if (it == values_.end()) return Fail(fmt::format("tile '{}' is used before it is assigned", var->name_hint()));
  if (!std::holds_alternative<TileValue>(it->second)) {
    return Fail(fmt::format("the {} '{}' is a tensor, not a tile", role, var->name_hint()));
  }
  return std::get<TileValue>(it->second);
}

pypto::expected<ir::Shape, std::string> Decoder::Ints(const ir::ExprPtr& expr, const char* role) const {
  const auto* tuple = expr->As<ir::TupleLiteral>();
  if (!tuple) return Fail(fmt::format("the {} must be a list of integers", role));
  ir::Shape values;
  for (const auto& element : tuple->elements()) {
    auto value = ir::AsConstInt(element);
    if (!value) {
      return Fail(fmt::format("the {} must be integer literals; dynamic values are not supported yet", role));
    }
    values.push_back(*value);
  }
  return values;
}

// Region offsets: integer scalar expressions, constant or computed.
pypto::expected<std::vector<Operand>, std::string> Decoder::Offsets(const ir::ExprPtr& expr, const char* role) {
  const auto* tuple = expr->As<ir::TupleLiteral>();
  if (!tuple) return Fail(fmt::format("the {} must be a list of integers", role));
  std::vector<Operand> offsets;
  for (const auto& element : tuple->elements()) {
    const auto* scalar = element->type()->As<ir::ScalarType>();
    if (!scalar || !ir::IsInteger(scalar->dtype())) {
      return Fail(fmt::format("the {} must be integers, got `{}` of type {}", role, ir::PrintExpr(element),
                              element->type()->str()));
    }
    auto offset = Scalar(element);
    if (!offset) return Error(offset.error());
    offsets.push_back(*offset);
  }
  return offsets;
}

// The tile a result variable names, with its allocated place in the core's buffers.
pypto::expected<TileValue, std::string> Decoder::ResultTile(const ir::VarPtr& target, const char* op) const {
  if (!target) return Fail(fmt::format("the result of {} is not assigned to a tile", op));
  const auto* tile = target->type()->As<ir::TileType>();
  if (!tile) return Fail(fmt::format("the result '{}' has type {}, not a tile", target->name_hint(),
                                     target->type()->str()));
  if (!tile->memref()) {
    return Fail(fmt::format("tile '{}' has no buffer address; the simulator runs kernels after memory allocation",
                            target->name_hint()));
  }
  // FP4 tiles hold their values packed, two to a byte, in the first half of their buffer.
  const bool fp4 = tile->dtype() == ir::DataType::FP4;
  const int bits = fp4 ? 8 : ir::DataTypeBits(tile->dtype());
  if (bits <= 0 || bits % 8 != 0 || !rt::RuntimeDtypeCode(tile->dtype())) {
    return Fail(fmt::format("tile '{}' has dtype {}, which the simulator does not support yet",
                            target->name_hint(), ir::DataTypeName(tile->dtype())));
  }
  if (tile->shape().empty() || tile->shape().size() > kMaxDims) {
    return Fail(fmt::format("tile '{}' has rank {}; the simulator supports 1 to {}", target->name_hint(),
                            tile->shape().size(), kMaxDims));
  }
  for (int64_t dim : tile->shape())
    if (dim <= 0) return Fail(fmt::format("tile '{}' has a non-positive dimension", target->name_hint()));
  const bool vector = kernel_.core_type == rt::CoreType::AIV;
  if (vector && tile->memory_space() != ir::MemorySpace::Vec) {
    return Fail(fmt::format("tile '{}' lives in {}, but a vector kernel only has the Vec buffer (UB)",
                            target->name_hint(), ir::MemorySpaceName(tile->memory_space())));
  }
  TileValue value;
  value.dtype = tile->dtype();
  value.shape = tile->shape();
  value.num_elements = tile->num_elements();
  value.ref = TileRef{tile->memory_space(), tile->memref()->byte_offset, tile->num_bytes()};
  const int64_t capacity = soc_.capacity(tile->memory_space());
  const int64_t elem_bytes = bits / 8;
  if (value.ref.byte_offset < 0 || value.ref.byte_offset > capacity - value.ref.bytes) {
    return Fail(fmt::format("tile '{}' occupies bytes [{}, {}) of {}, outside its {}-byte capacity on {}",
                            target->name_hint(), value.ref.byte_offset, value.ref.byte_offset + value.ref.bytes,
                            ir::MemorySpaceName(tile->memory_space()), capacity, soc_.name));
  }
  if (tile->memref()->size < value.ref.bytes) {
    return Fail(fmt::format("tile '{}' needs {} bytes but its buffer allocation holds {}", target->name_hint(),
                            value.ref.bytes, tile->memref()->size));
  }
  if (value.ref.byte_offset % elem_bytes != 0) {
    return Fail(fmt::format("tile '{}' starts at byte {}, not aligned to its {}-byte elements",
                            target->name_hint(), value.ref.byte_offset, elem_bytes));
  }
  return value;
}

// The region [offsets, offsets + shape) must lie in the kernel's static view of the tensor. A
// computed offset is checked when the instruction runs (against the view the task was given).
pypto::expected<void, std::string> Decoder::CheckRegion(const KernelParam& tensor, const std::vector<Operand>& offsets,
                                                        const ir::ExprPtr& offsets_expr, const ir::Shape& shape,
                                                        Instr& instr, bool valid_only) const {
  if (offsets.size() != tensor.shape.size() || shape.size() != tensor.shape.size()) {
    return Fail(fmt::format("region rank {} does not match tensor '{}' of rank {}", offsets.size(), tensor.name,
                            tensor.shape.size()));
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    const Operand& offset = offsets[d];
    // A tile moving only its valid region may reach past the tensor's end (a ragged tail): that
    // region is checked when the instruction runs.
    // A dynamic axis (a program compiled for every extent) has no static extent to check against.
    const bool dynamic = tensor.shape[d] == ir::kDynamicExtent;
    const bool past_end = !valid_only && !dynamic &&
                          (offset.is_reg() ? shape[d] > tensor.shape[d] : offset.imm > tensor.shape[d] - shape[d]);
    const bool outside = shape[d] <= 0 || (!offset.is_reg() && offset.imm < 0) || past_end;
    if (outside) {
      std::vector<std::string> text;
      const auto& elements = offsets_expr->As<ir::TupleLiteral>()->elements();
      for (size_t k = 0; k < offsets.size(); ++k)
        text.push_back(offsets[k].is_reg() ? ir::PrintExpr(elements[k]) : std::to_string(offsets[k].imm));
      return Fail(fmt::format("region at [{}] of shape [{}] is outside tensor '{}' of shape [{}]",
                              fmt::join(text, ", "), fmt::join(shape, ", "), tensor.name,
                              fmt::join(tensor.shape, ", ")));
    }
    instr.offsets[d] = offset.is_reg() ? 0 : offset.imm;
    instr.offset_regs[d] = offset.reg;
    instr.dynamic = instr.dynamic || offset.is_reg();
    instr.shape[d] = shape[d];
  }
  instr.rank = static_cast<uint8_t>(shape.size());
  instr.tensor_slot = tensor.slot;
  instr.rt_dtype = tensor.rt_dtype;
  return {};
}

ElemKind Decoder::KindOf(ir::DataType dtype) {
  if (dtype == ir::DataType::FP32) return ElemKind::F32;
  if (dtype == ir::DataType::INT32) return ElemKind::I32;
  return ElemKind::Raw;
}

bool Decoder::Overlap(const TileRef& a, const TileRef& b) {
  return a.space == b.space && a.byte_offset < b.byte_offset + b.bytes && b.byte_offset < a.byte_offset + a.bytes;
}

pypto::expected<void, std::string> Decoder::SameSize(const TileValue& src, const TileValue& out) const {
  if (src.num_elements == out.num_elements && src.ref.bytes == out.ref.bytes) {
    if (!Overlap(out.ref, src.ref) || out.ref.byte_offset == src.ref.byte_offset) return {};
    return Fail(fmt::format("the result at [{}, {}) partially overlaps an operand at [{}, {}) of {}",
                            out.ref.byte_offset, out.ref.byte_offset + out.ref.bytes, src.ref.byte_offset,
                            src.ref.byte_offset + src.ref.bytes, ir::MemorySpaceName(src.ref.space)));
  }
  return Fail(fmt::format("an operand ({} x {}) and the result ({} x {}) differ in size", src.num_elements,
                          ir::DataTypeName(src.dtype), out.num_elements, ir::DataTypeName(out.dtype)));
}

// A tile-scalar operand: a literal, an integer expression, or an FP32 scalar parameter.
pypto::expected<ScalarOperand, std::string> Decoder::ScalarArg(const ir::ExprPtr& expr) {
  ScalarOperand scalar;
  if (const auto* f = expr->As<ir::ConstFloat>()) {
    scalar.imm = f->value();
    return scalar;
  }
  if (const auto* var = expr->As<ir::Var>()) {
    if (auto it = float_regs_.find(var); it != float_regs_.end()) {
      scalar.source = ScalarOperand::Source::Fp32BitsReg;
      scalar.reg = static_cast<int32_t>(it->second);
      return scalar;
    }
  }
  auto operand = Scalar(expr);
  if (!operand) return pypto::unexpected(operand.error());
  if (operand->is_reg()) {
    scalar.source = ScalarOperand::Source::IntReg;
    scalar.reg = operand->reg;
  } else {
    scalar.imm = static_cast<double>(operand->imm);
  }
  return scalar;
}

}  // namespace pypto::sim::decode
