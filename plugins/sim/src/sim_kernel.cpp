#include "sim_kernel.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <unordered_map>
#include <variant>

#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"

namespace pypto::sim {

const char* OpcodeName(Opcode op) {
  switch (op) {
    case Opcode::Load: return "load";
    case Opcode::Store: return "store";
    case Opcode::Add: return "add";
    case Opcode::Sub: return "sub";
    case Opcode::Mul: return "mul";
    case Opcode::Div: return "div";
  }
  return "?";
}

int RuntimeDtype(ir::DataType dtype) {
  using ir::DataType;
  switch (dtype) {
    case DataType::FP32: return PYPTO_RT_FLOAT32;
    case DataType::FP16: return PYPTO_RT_FLOAT16;
    case DataType::INT32: return PYPTO_RT_INT32;
    case DataType::INT16: return PYPTO_RT_INT16;
    case DataType::INT8: return PYPTO_RT_INT8;
    case DataType::UINT8: return PYPTO_RT_UINT8;
    case DataType::BF16: return PYPTO_RT_BFLOAT16;
    case DataType::INT64: return PYPTO_RT_INT64;
    case DataType::UINT64: return PYPTO_RT_UINT64;
    case DataType::UINT16: return PYPTO_RT_UINT16;
    case DataType::UINT32: return PYPTO_RT_UINT32;
    case DataType::BOOL: return PYPTO_RT_BOOL;
    case DataType::FP8E4M3FN: return PYPTO_RT_FP8E4M3FN;
    case DataType::FP8E8M0: return PYPTO_RT_FP8E8M0;
    case DataType::FP4: return PYPTO_RT_FP4E2M1;
    default: return -1;
  }
}

std::string DecodedKernel::Describe(size_t index) const {
  if (index >= sources.size()) return fmt::format("kernel '{}' instruction #{}", name, index);
  const auto& source = sources[index];
  return fmt::format("kernel '{}' instruction #{} ({}) `{}` at {}", name, index, OpcodeName(code[index].op),
                     source.text, source.location);
}

namespace {

using Error = pypto::unexpected<std::string>;

struct TensorValue {
  uint32_t param = 0;  // index into DecodedKernel::params
};
struct TileValue {
  TileRef ref;
  ir::DataType dtype = ir::DataType::FP32;
  ir::Shape shape;
  int64_t num_elements = 0;
};
using Value = std::variant<TensorValue, TileValue>;

class Decoder {
 public:
  Decoder(const ir::Function& function, int32_t func_id, rt::CoreType core_type, const ir::SocSpec& soc)
      : function_(function), soc_(soc) {
    kernel_.name = function.name();
    kernel_.func_id = func_id;
    kernel_.core_type = core_type;
  }

  pypto::expected<DecodedKernel, std::string> Run() {
    if (auto ok = CheckFunctionType(); !ok) return Error(ok.error());
    if (auto ok = DecodeParams(); !ok) return Error(ok.error());
    if (!function_.body()) return Error(fmt::format("{}: kernel '{}' has no body", function_.span().str(), Name()));
    if (auto ok = DecodeStmt(function_.body()); !ok) return Error(ok.error());
    return std::move(kernel_);
  }

 private:
  const std::string& Name() const { return function_.name(); }

  pypto::expected<void, std::string> CheckFunctionType() {
    using ir::FunctionType;
    const auto type = function_.type();
    const bool vector = kernel_.core_type == rt::CoreType::AIV;
    if (type == FunctionType::AIV || type == FunctionType::AIC || type == FunctionType::InCore) {
      if ((type == FunctionType::AIV && !vector) || (type == FunctionType::AIC && vector)) {
        return Error(fmt::format("{}: kernel '{}' is an {} function but the plan runs it on an {} core",
                                 function_.span().str(), Name(), ir::FunctionTypeName(type),
                                 rt::CoreTypeName(kernel_.core_type)));
      }
      if (!vector) {
        return Error(fmt::format("{}: kernel '{}': cube (AIC) kernels are not supported by the simulator yet",
                                 function_.span().str(), Name()));
      }
      return {};
    }
    return Error(fmt::format("{}: function '{}' is a {} function, not a kernel (AIV/AIC)", function_.span().str(),
                             Name(), ir::FunctionTypeName(type)));
  }

  pypto::expected<void, std::string> DecodeParams() {
    // Tensors take args[] slots first, in order; scalars follow.
    std::vector<size_t> scalars;
    for (size_t i = 0; i < function_.params().size(); ++i) {
      const auto& var = function_.params()[i];
      if (const auto* tensor = var->type()->As<ir::TensorType>()) {
        const int rt_dtype = RuntimeDtype(tensor->dtype());
        if (rt_dtype < 0 || ir::DataTypeBits(tensor->dtype()) % 8 != 0) {
          return Error(fmt::format("{}: kernel '{}': tensor parameter '{}' has dtype {}, which the simulator does "
                                   "not support yet",
                                   var->span().str(), Name(), var->name_hint(), ir::DataTypeName(tensor->dtype())));
        }
        if (tensor->shape().empty() || tensor->shape().size() > kMaxDims) {
          return Error(fmt::format("{}: kernel '{}': tensor parameter '{}' has rank {}; the runtime supports 1 to {}",
                                   var->span().str(), Name(), var->name_hint(), tensor->shape().size(), kMaxDims));
        }
        values_[var.get()] = TensorValue{static_cast<uint32_t>(kernel_.params.size())};
        kernel_.params.push_back(KernelParam{.name = var->name_hint(),
                                             .slot = kernel_.tensor_count++,
                                             .is_tensor = true,
                                             .dtype = tensor->dtype(),
                                             .rt_dtype = static_cast<uint8_t>(rt_dtype),
                                             .shape = tensor->shape()});
      } else if (const auto* scalar = var->type()->As<ir::ScalarType>()) {
        scalars.push_back(i);
        kernel_.params.push_back(KernelParam{.name = var->name_hint(), .is_tensor = false, .dtype = scalar->dtype()});
      } else {
        return Error(fmt::format("{}: kernel '{}': parameter '{}' has type {}; kernels take tensors and scalars",
                                 var->span().str(), Name(), var->name_hint(), var->type()->str()));
      }
    }
    for (auto& param : kernel_.params)
      if (!param.is_tensor) param.slot = kernel_.tensor_count + kernel_.scalar_count++;
    if (kernel_.tensor_count > 32 || kernel_.scalar_count > 16) {
      return Error(fmt::format("{}: kernel '{}' takes {} tensors and {} scalars; the runtime allows 32 and 16",
                               function_.span().str(), Name(), kernel_.tensor_count, kernel_.scalar_count));
    }
    return {};
  }

  pypto::expected<void, std::string> DecodeStmt(const ir::StmtPtr& stmt) {
    if (done_) return {};  // anything after a return is unreachable
    if (const auto* seq = stmt->As<ir::SeqStmts>()) {
      for (const auto& child : seq->stmts())
        if (auto ok = DecodeStmt(child); !ok) return ok;
      return {};
    }
    if (const auto* assign = stmt->As<ir::AssignStmt>()) return DecodeValue(assign->var(), assign->value(), *stmt);
    if (const auto* eval = stmt->As<ir::EvalStmt>()) return DecodeValue(nullptr, eval->expr(), *stmt);
    if (stmt->Is<ir::ReturnStmt>()) {
      done_ = true;
      return {};
    }
    return Error(fmt::format("{}: kernel '{}': this statement kind is not supported by the simulator (only "
                             "assignments, op calls and return)",
                             stmt->span().str(), Name()));
  }

  static const ir::Span& SpanOf(const ir::Expr& expr, const ir::Stmt& stmt) {
    if (expr.span().known() || !stmt.span().known()) return expr.span();
    return stmt.span();
  }

  pypto::expected<void, std::string> DecodeValue(const ir::VarPtr& target, const ir::ExprPtr& value,
                                                 const ir::Stmt& stmt) {
    const auto* call = value->As<ir::Call>();
    const std::string text = target ? fmt::format("{} = {}", target->name_hint(), ir::PrintExpr(value))
                                     : ir::PrintExpr(value);
    const ir::Span& span = SpanOf(*value, stmt);
    if (!call) {
      // A plain alias (x = y) just renames a value.
      if (const auto* var = value->As<ir::Var>(); var && target) {
        auto it = values_.find(var);
        if (it != values_.end()) {
          values_[target.get()] = it->second;
          return {};
        }
      }
      return Error(fmt::format("{}: kernel '{}': `{}` is not an op call; the simulator cannot run it",
                               span.str(), Name(), text));
    }
    if (!call->is_op_call()) {
      return Error(fmt::format("{}: kernel '{}': calls to other functions ('{}') are not supported by the "
                               "simulator yet",
                               span.str(), Name(), call->callee()));
    }
    source_ = InstrSource{text, span.str()};
    span_ = &span;
    const std::string& op = call->op()->name;
    if (op == "tile.load") return DecodeLoad(target, *call);
    if (op == "tile.store") return DecodeStore(target, *call);
    if (op == "tile.add") return DecodeBinary(Opcode::Add, target, *call);
    if (op == "tile.sub") return DecodeBinary(Opcode::Sub, target, *call);
    if (op == "tile.mul") return DecodeBinary(Opcode::Mul, target, *call);
    if (op == "tile.div") return DecodeBinary(Opcode::Div, target, *call);
    return Error(fmt::format("{}: kernel '{}' uses op '{}', which the simulator does not support yet (in `{}`)",
                             span.str(), Name(), op, text));
  }

  Error Fail(const std::string& what) const {
    return Error(fmt::format("{}: kernel '{}': {} (in `{}`)", span_->str(), Name(), what, source_.text));
  }

  void Emit(const Instr& instr) {
    for (const TileRef* ref : {&instr.dst, &instr.src0, &instr.src1}) {
      if (ref->bytes == 0) continue;
      auto& mark = kernel_.high_water[static_cast<size_t>(ref->space) % kernel_.high_water.size()];
      mark = std::max(mark, ref->byte_offset + ref->bytes);
    }
    kernel_.code.push_back(instr);
    kernel_.sources.push_back(source_);
  }

  pypto::expected<const KernelParam*, std::string> Tensor(const ir::ExprPtr& expr, const char* role) const {
    const auto* var = expr->As<ir::Var>();
    auto it = var ? values_.find(var) : values_.end();
    if (it == values_.end() || !std::holds_alternative<TensorValue>(it->second)) {
      return Fail(fmt::format("the {} must be one of the kernel's tensor parameters, got `{}`", role,
                              ir::PrintExpr(expr)));
    }
    return &kernel_.params[std::get<TensorValue>(it->second).param];
  }

  pypto::expected<TileValue, std::string> Tile(const ir::ExprPtr& expr, const char* role) const {
    const auto* var = expr->As<ir::Var>();
    if (!var) return Fail(fmt::format("the {} must be a tile variable, got `{}`", role, ir::PrintExpr(expr)));
    auto it = values_.find(var);
    if (it == values_.end()) return Fail(fmt::format("tile '{}' is used before it is assigned", var->name_hint()));
    if (!std::holds_alternative<TileValue>(it->second)) {
      return Fail(fmt::format("the {} '{}' is a tensor, not a tile", role, var->name_hint()));
    }
    return std::get<TileValue>(it->second);
  }

  pypto::expected<ir::Shape, std::string> Ints(const ir::ExprPtr& expr, const char* role) const {
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

  // The tile a result variable names, with its allocated place in the core's buffers.
  pypto::expected<TileValue, std::string> ResultTile(const ir::VarPtr& target, const char* op) const {
    if (!target) return Fail(fmt::format("the result of {} is not assigned to a tile", op));
    const auto* tile = target->type()->As<ir::TileType>();
    if (!tile) return Fail(fmt::format("the result '{}' has type {}, not a tile", target->name_hint(),
                                       target->type()->str()));
    if (!tile->memref()) {
      return Fail(fmt::format("tile '{}' has no buffer address; the simulator runs kernels after memory allocation",
                              target->name_hint()));
    }
    const int bits = ir::DataTypeBits(tile->dtype());
    if (bits <= 0 || bits % 8 != 0 || RuntimeDtype(tile->dtype()) < 0) {
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

  // The region [offsets, offsets + shape) must lie in the kernel's static view of the tensor.
  pypto::expected<void, std::string> CheckRegion(const KernelParam& tensor, const ir::Shape& offsets,
                                                 const ir::Shape& shape, Instr& instr) const {
    if (offsets.size() != tensor.shape.size() || shape.size() != tensor.shape.size()) {
      return Fail(fmt::format("region rank {} does not match tensor '{}' of rank {}", offsets.size(), tensor.name,
                              tensor.shape.size()));
    }
    for (size_t d = 0; d < shape.size(); ++d) {
      if (offsets[d] < 0 || shape[d] <= 0 || offsets[d] > tensor.shape[d] - shape[d]) {
        return Fail(fmt::format("region at [{}] of shape [{}] is outside tensor '{}' of shape [{}]",
                                fmt::join(offsets, ", "), fmt::join(shape, ", "), tensor.name,
                                fmt::join(tensor.shape, ", ")));
      }
      instr.offsets[d] = offsets[d];
      instr.shape[d] = shape[d];
    }
    instr.rank = static_cast<uint8_t>(shape.size());
    instr.tensor_slot = tensor.slot;
    instr.rt_dtype = tensor.rt_dtype;
    return {};
  }

  pypto::expected<void, std::string> DecodeLoad(const ir::VarPtr& target, const ir::Call& call) {
    if (call.args().size() != 3) return Fail("tile.load takes (tensor, offsets, shapes)");
    auto tensor = Tensor(call.args()[0], "source of tile.load");
    if (!tensor) return Error(tensor.error());
    auto offsets = Ints(call.args()[1], "load offsets");
    if (!offsets) return Error(offsets.error());
    auto shape = Ints(call.args()[2], "load shapes");
    if (!shape) return Error(shape.error());
    auto tile = ResultTile(target, "tile.load");
    if (!tile) return Error(tile.error());

    Instr instr;
    instr.op = Opcode::Load;
    if (auto ok = CheckRegion(**tensor, *offsets, *shape, instr); !ok) return ok;
    int64_t count = 1;
    for (int64_t dim : *shape) count *= dim;
    if (tile->dtype != (*tensor)->dtype || count != tile->num_elements) {
      return Fail(fmt::format("tile '{}' ({} x {}) does not match the loaded region ({} x {})", target->name_hint(),
                              tile->num_elements, ir::DataTypeName(tile->dtype), count,
                              ir::DataTypeName((*tensor)->dtype)));
    }
    instr.kind = KindOf(tile->dtype);
    instr.elem_bytes = static_cast<uint8_t>(ir::DataTypeBytes(tile->dtype));
    instr.dst = tile->ref;
    instr.num_elements = count;
    values_[target.get()] = *tile;
    Emit(instr);
    return {};
  }

  pypto::expected<void, std::string> DecodeStore(const ir::VarPtr& target, const ir::Call& call) {
    if (call.args().size() != 3) return Fail("tile.store takes (tile, offsets, output_tensor)");
    auto tile = Tile(call.args()[0], "value of tile.store");
    if (!tile) return Error(tile.error());
    auto offsets = Ints(call.args()[1], "store offsets");
    if (!offsets) return Error(offsets.error());
    auto tensor = Tensor(call.args()[2], "destination of tile.store");
    if (!tensor) return Error(tensor.error());
    if (tile->dtype != (*tensor)->dtype) {
      return Fail(fmt::format("cannot store a {} tile into tensor '{}' of {}", ir::DataTypeName(tile->dtype),
                              (*tensor)->name, ir::DataTypeName((*tensor)->dtype)));
    }
    // The tile's shape is the region's; a rank-deficient tile is padded with leading 1s.
    ir::Shape shape = tile->shape;
    while (shape.size() < offsets->size()) shape.insert(shape.begin(), 1);
    Instr instr;
    instr.op = Opcode::Store;
    if (auto ok = CheckRegion(**tensor, *offsets, shape, instr); !ok) return ok;
    instr.kind = KindOf(tile->dtype);
    instr.elem_bytes = static_cast<uint8_t>(ir::DataTypeBytes(tile->dtype));
    instr.src0 = tile->ref;
    instr.num_elements = tile->num_elements;
    // The result names the tensor that was written.
    if (target) values_[target.get()] = values_.at(call.args()[2]->As<ir::Var>());
    Emit(instr);
    return {};
  }

  static ElemKind KindOf(ir::DataType dtype) {
    if (dtype == ir::DataType::FP32) return ElemKind::F32;
    if (dtype == ir::DataType::INT32) return ElemKind::I32;
    return ElemKind::Raw;
  }

  static bool Overlap(const TileRef& a, const TileRef& b) {
    return a.space == b.space && a.byte_offset < b.byte_offset + b.bytes && b.byte_offset < a.byte_offset + a.bytes;
  }

  pypto::expected<void, std::string> DecodeBinary(Opcode op, const ir::VarPtr& target, const ir::Call& call) {
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
    const ElemKind kind = KindOf(out->dtype);
    if (kind == ElemKind::Raw) {
      return Fail(fmt::format("{} on {} tiles is not supported yet by the simulator (it computes on FP32 and INT32)",
                              name, ir::DataTypeName(out->dtype)));
    }
    // In-place reuse means the same place; a partial overlap is an allocation bug.
    for (const TileValue* src : {&*lhs, &*rhs}) {
      if (Overlap(out->ref, src->ref) && out->ref.byte_offset != src->ref.byte_offset) {
        return Fail(fmt::format("result tile '{}' at [{}, {}) partially overlaps an operand at [{}, {}) of {}",
                                target->name_hint(), out->ref.byte_offset, out->ref.byte_offset + out->ref.bytes,
                                src->ref.byte_offset, src->ref.byte_offset + src->ref.bytes,
                                ir::MemorySpaceName(src->ref.space)));
      }
    }
    Instr instr;
    instr.op = op;
    instr.kind = kind;
    instr.elem_bytes = static_cast<uint8_t>(ir::DataTypeBytes(out->dtype));
    instr.dst = out->ref;
    instr.src0 = lhs->ref;
    instr.src1 = rhs->ref;
    instr.num_elements = out->num_elements;
    values_[target.get()] = *out;
    Emit(instr);
    return {};
  }

  const ir::Function& function_;
  const ir::SocSpec& soc_;
  DecodedKernel kernel_;
  std::unordered_map<const ir::Var*, Value> values_;
  InstrSource source_;
  const ir::Span* span_ = nullptr;
  bool done_ = false;
};

std::string Region(const Instr& instr) {
  std::vector<std::string> parts;
  for (int d = 0; d < instr.rank; ++d)
    parts.push_back(fmt::format("{}:{}", instr.offsets[d], instr.offsets[d] + instr.shape[d]));
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

std::string Place(const TileRef& ref) {
  return fmt::format("{}[0x{:05x}, +{}]", ir::MemorySpaceName(ref.space), ref.byte_offset, ref.bytes);
}

const char* KindName(ElemKind kind) {
  switch (kind) {
    case ElemKind::F32: return "f32";
    case ElemKind::I32: return "i32";
    case ElemKind::Raw: return "raw";
  }
  return "?";
}

}  // namespace

pypto::expected<DecodedKernel, std::string> DecodeKernel(const ir::Function& function, int32_t func_id,
                                                         rt::CoreType core_type, const ir::SocSpec& soc) {
  return Decoder(function, func_id, core_type, soc).Run();
}

std::string FormatListing(const DecodedKernel& kernel, const ir::SocSpec& soc) {
  std::string out = fmt::format("kernel {} (func_id {}, {} core, {} / {})\n", kernel.name, kernel.func_id,
                                rt::CoreTypeName(kernel.core_type), soc.name, soc.arch);
  out += fmt::format("params ({} tensors, {} scalars):\n", kernel.tensor_count, kernel.scalar_count);
  for (const auto& param : kernel.params) {
    if (param.is_tensor) {
      out += fmt::format("  args[{}] {}: tensor {} [{}]\n", param.slot, param.name, ir::DataTypeName(param.dtype),
                         fmt::join(param.shape, ", "));
    } else {
      out += fmt::format("  args[{}] {}: scalar {}\n", param.slot, param.name, ir::DataTypeName(param.dtype));
    }
  }
  out += fmt::format("code ({} instructions):\n", kernel.code.size());
  for (size_t i = 0; i < kernel.code.size(); ++i) {
    const Instr& instr = kernel.code[i];
    std::string operands;
    switch (instr.op) {
      case Opcode::Load:
        operands = fmt::format("{} <- args[{}]{}  ({} elements)", Place(instr.dst), instr.tensor_slot, Region(instr),
                               instr.num_elements);
        break;
      case Opcode::Store:
        operands = fmt::format("args[{}]{} <- {}  ({} elements)", instr.tensor_slot, Region(instr), Place(instr.src0),
                               instr.num_elements);
        break;
      default:
        operands = fmt::format("{} <- {}, {}  ({} elements)", Place(instr.dst), Place(instr.src0), Place(instr.src1),
                               instr.num_elements);
        break;
    }
    out += fmt::format("  {:3}: {:<5} {:<3} {}\n", i, OpcodeName(instr.op), KindName(instr.kind), operands);
    out += fmt::format("       ; {}  @ {}\n", kernel.sources[i].text, kernel.sources[i].location);
  }
  out += "buffers:\n";
  for (auto space : {ir::MemorySpace::Vec, ir::MemorySpace::Mat, ir::MemorySpace::Left, ir::MemorySpace::Right,
                     ir::MemorySpace::Acc, ir::MemorySpace::Bias}) {
    const int64_t used = kernel.high_water[static_cast<size_t>(space)];
    if (used > 0 || (space == ir::MemorySpace::Vec && kernel.core_type == rt::CoreType::AIV)) {
      out += fmt::format("  {}: {} of {} bytes used\n", ir::MemorySpaceName(space), used, soc.capacity(space));
    }
  }
  return out;
}

}  // namespace pypto::sim
