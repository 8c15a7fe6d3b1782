// The Decoder's entry and dispatch: DecodeKernel, the function type and parameter checks, and
// DecodeValue, which sends each assignment or call to the decoder of its op (the other decode_*.cpp).
#include "kernel_decoder.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "overwritten_fills.h"
#include "pypto/ir/dynamic_extent.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"
#include "pypto/runtime/dtype_code.h"

namespace pypto::sim::decode {

Decoder::Decoder(const ir::Function& function, int32_t func_id, rt::CoreType core_type, const ir::SocSpec& soc)
    : function_(function), soc_(soc) {
  kernel_.name = function.name();
  kernel_.func_id = func_id;
  kernel_.core_type = core_type;
}

pypto::expected<DecodedKernel, std::string> Decoder::Run() {
  if (auto ok = CheckFunctionType(); !ok) return Error(ok.error());
  if (auto ok = DecodeParams(); !ok) return Error(ok.error());
  if (!function_.body()) return Error(fmt::format("{}: kernel '{}' has no body", function_.span().str(), Name()));
  if (auto ok = DecodeStmt(function_.body()); !ok) return Error(ok.error());
  DropOverwrittenFills(kernel_);
  return std::move(kernel_);
}

pypto::expected<void, std::string> Decoder::CheckFunctionType() {
  using ir::FunctionType;
  const auto type = function_.type();
  const bool vector = kernel_.core_type == rt::CoreType::AIV;
  if (type == FunctionType::AIV || type == FunctionType::AIC || type == FunctionType::InCore) {
    if ((type == FunctionType::AIV && !vector) || (type == FunctionType::AIC && vector)) {
      return Error(fmt::format("{}: kernel '{}' is an {} function but the plan runs it on an {} core",
                               function_.span().str(), Name(), ir::FunctionTypeName(type),
                               rt::CoreTypeName(kernel_.core_type)));
    }
    return {};
  }
  return Error(fmt::format("{}: function '{}' is a {} function, not a kernel (AIV/AIC)", function_.span().str(),
                           Name(), ir::FunctionTypeName(type)));
}

pypto::expected<void, std::string> Decoder::DecodeParams() {
  // Tensors take args[] slots first, in order; scalars follow.
  std::vector<size_t> scalars;
  for (size_t i = 0; i < function_.params().size(); ++i) {
    const auto& var = function_.params()[i];
    if (const auto* tensor = var->type()->As<ir::TensorType>()) {
      const auto rt_dtype = rt::RuntimeDtypeCode(tensor->dtype());
      const bool fp4 = tensor->dtype() == ir::DataType::FP4;
      if (!rt_dtype || (ir::DataTypeBits(tensor->dtype()) % 8 != 0 && !fp4)) {
        return Error(fmt::format("{}: kernel '{}': tensor parameter '{}' has dtype {}, which the simulator does "
                                 "not support yet",
                                 var->span().str(), Name(), var->name_hint(), ir::DataTypeName(tensor->dtype())));
      }
      if (tensor->shape().empty() || tensor->shape().size() > kMaxDims) {
        return Error(fmt::format("{}: kernel '{}': tensor parameter '{}' has rank {}; the runtime supports 1 to {}",
                                 var->span().str(), Name(), var->name_hint(), tensor->shape().size(), kMaxDims));
      }
      // An FP4 tensor reaches the kernel as the caller's bytes (torch's float4_e2m1fn_x2), two
      // elements to each: its descriptor's last extent is half the DSL's.
      ir::Shape shape = tensor->shape();
      if (fp4 && shape.back() != ir::kDynamicExtent) {
        if (shape.back() % 2 != 0)
          return Error(fmt::format("{}: kernel '{}': FP4 tensor parameter '{}' has an odd last extent {}; FP4 "
                                   "values come in pairs",
                                   var->span().str(), Name(), var->name_hint(), shape.back()));
        shape.back() /= 2;
      }
      values_[var.get()] = TensorValue{static_cast<uint32_t>(kernel_.params.size())};
      kernel_.params.push_back(KernelParam{.name = var->name_hint(),
                                           .slot = kernel_.tensor_count++,
                                           .is_tensor = true,
                                           .dtype = tensor->dtype(),
                                           .rt_dtype = *rt_dtype,
                                           .shape = std::move(shape),
                                           .layout = tensor->layout()});
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
  // Integer scalar parameters are read into registers when the kernel starts; FP32 ones too, as
  // their bit pattern, for the tile-scalar ops that read them, and FP16 / BF16 ones widened to FP32
  // (the ops compute a 16-bit tile in FP32 and round each result back).
  for (size_t i : scalars) {
    const auto& var = function_.params()[i];
    const auto& param = kernel_.params[i];
    const bool half = param.dtype == ir::DataType::FP16 || param.dtype == ir::DataType::BF16;
    if (param.dtype == ir::DataType::FP32 || half) {
      const uint32_t reg = NewRegister(param.name, "scalar parameter (FP32 bits)");
      const Widen widen = !half ? Widen::None : param.dtype == ir::DataType::FP16 ? Widen::Half : Widen::BFloat;
      kernel_.scalar_params.push_back(
          ScalarParamInit{.reg = reg, .slot = param.slot, .bits = 32, .is_signed = false, .widen = widen});
      float_regs_[var.get()] = reg;
      continue;
    }
    if (!IsIntScalar(var->type())) continue;
    const int bits = param.dtype == ir::DataType::BOOL ? 8 : ir::DataTypeBits(param.dtype);
    const uint32_t reg = NewRegister(param.name, "scalar parameter");
    kernel_.scalar_params.push_back(ScalarParamInit{
        .reg = reg,
        .slot = param.slot,
        .bits = static_cast<uint8_t>(std::clamp(bits, 1, 64)),
        .is_signed = static_cast<uint8_t>(param.dtype) < 0x20 && param.dtype != ir::DataType::BOOL});
    values_[var.get()] = ScalarValue{Operand::Reg(reg)};
  }
  if (kernel_.tensor_count > 32 || kernel_.scalar_count > 16) {
    return Error(fmt::format("{}: kernel '{}' takes {} tensors and {} scalars; the runtime allows 32 and 16",
                             function_.span().str(), Name(), kernel_.tensor_count, kernel_.scalar_count));
  }
  return {};
}

const ir::Span& Decoder::SpanOf(const ir::Expr& expr, const ir::Stmt& stmt) {
  if (expr.span().known() || !stmt.span().known()) return expr.span();
  return stmt.span();
}

// A view of a window whose rows are strided in its tile (a product's destination in an Acc tile,
// AllocateMemoryAddr) is only accumulated into: the products write row by row, other ops would
// read its bytes as contiguous.
pypto::expected<void, std::string> Decoder::CheckStridedViews(const std::string& op, const ir::Call& call) {
  const bool accumulates = op == "tile.matmul_acc" || op == "tile.gemv_acc";
  for (size_t i = 0; i < call.args().size(); ++i) {
    const auto* var = call.args()[i]->As<ir::Var>();
    auto it = var ? values_.find(var) : values_.end();
    if (it == values_.end() || !std::holds_alternative<TileValue>(it->second)) continue;
    if (std::get<TileValue>(it->second).ref.row_pitch == 0 || (accumulates && i == 0)) continue;
    return Fail(fmt::format("'{}' is a view of a window whose rows are strided in its tile, which {} does not read "
                            "in the simulator; only a product accumulates into it (pl.matmul_acc)",
                            var->name_hint(), op));
  }
  return {};
}

// A view at a computed place (DecodeSliceView) is found by the executor where it resolves its
// operands' places: in tile computations, stores and cross-core pipes. Other instructions would read
// the view's parent instead.
pypto::expected<void, std::string> Decoder::CheckViewOperands(const std::string& op, const ir::Call& call) {
  if (auto ok = CheckStridedViews(op, call); !ok) return ok;
  if (op == "tile.store" || ir::IsCrossCorePipeOp(op) || FindComputeSpec(op)) return {};
  for (const auto& arg : call.args()) {
    const auto* var = arg->As<ir::Var>();
    auto it = var ? values_.find(var) : values_.end();
    if (it == values_.end() || !std::holds_alternative<TileValue>(it->second)) continue;
    if (std::get<TileValue>(it->second).ref.offset_reg < 0) continue;
    return Fail(fmt::format("'{}' is a view of a window at a place computed in the kernel, which {} does not read "
                            "in the simulator yet",
                            var->name_hint(), op));
  }
  return {};
}

pypto::expected<void, std::string> Decoder::DecodeValue(const ir::VarPtr& target, const ir::ExprPtr& value,
                                                        const ir::Stmt& stmt) {
  const auto* call = value->As<ir::Call>();
  const std::string text = target ? fmt::format("{} = {}", target->name_hint(), ir::PrintExpr(value))
                                   : ir::PrintExpr(value);
  const ir::Span& span = SpanOf(*value, stmt);
  source_ = InstrSource{text, span.str()};
  span_ = &span;
  if (!call && target && target->type()->As<ir::ScalarType>()) {
    // A scalar assignment computes (or just names) a value; its code runs before the next
    // instruction, which is where it stands in program order.
    if (!IsIntScalar(target->type())) {
      return Fail(fmt::format("'{}' is a {} scalar; the simulator computes only with integer scalars so far",
                              target->name_hint(), target->type()->str()));
    }
    auto operand = Scalar(value);
    if (!operand) return Error(operand.error());
    if (operand->is_reg() && kernel_.registers[static_cast<size_t>(operand->reg)].role.empty()) {
      kernel_.registers[static_cast<size_t>(operand->reg)].role = target->name_hint();
    }
    values_[target.get()] = ScalarValue{*operand};
    if (loop_depth_ > 0) loop_scalars_.push_back(target.get());
    return {};
  }
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
  const std::string& op = call->op()->name;
  if (auto ok = CheckViewOperands(op, *call); !ok) return ok;
  if (auto launch = LaunchValueOf(op)) return DecodeLaunchValue(*launch, target);
  if (op == "system.syncall") return DecodeSyncAll();
  if (op == "system.sync_set" || op == "system.sync_wait") return DecodeEvent(op == "system.sync_set", *call);
  if (RunsInProgramOrderHere(op)) return {};
  if (op == "system.aic_initialize_pipe" || op == "system.aiv_initialize_pipe") return DecodeInitPipe(*call);
  if (op == "system.reserve_buffer" || op == "system.import_peer_buffer") {
    // A device address the simulator's pipes have no use for: the pipe setup that reads it is sizing only.
    if (target) values_[target.get()] = ScalarValue{Operand::Imm(0)};
    return {};
  }
  if (ir::IsCrossCorePipeOp(op)) return DecodePipeOp(op, target, *call);
  if (op.starts_with("prefetch.")) return DecodePrefetch(op, target);
  if (op.starts_with("comm.")) return DecodeComm(op, target, *call);
  if (op == "tile.load") return DecodeLoad(target, *call);
  if (op == "tile.paged_gather") return DecodePagedGather(target, *call);
  if (op == "tile.mgather") return DecodeMemGather(target, *call);
  if (op == "tensor.read") return DecodeRead(target, *call);
  if (op == "tensor.write") return DecodeTensorWrite(target, *call);
  if (op == "tile.read" || op == "tile.write") return DecodeTileElement(op == "tile.write", target, *call);
  if (op == "scalar.cast") return DecodeScalarCast(target, *call);
  if (op == "array.create" || op == "array.get_element" || op == "array.update_element")
    return DecodeArrayOp(op, target, *call);
  if (op == "tile.store") return DecodeStore(target, *call);
  if (op == "tile.mscatter") return DecodeScatterStore(target, *call);
  if (op == "tile.add") return DecodeBinary(Opcode::Add, target, *call);
  if (op == "tile.sub") return DecodeBinary(Opcode::Sub, target, *call);
  if (op == "tile.mul") return DecodeBinary(Opcode::Mul, target, *call);
  if (op == "tile.div") return DecodeBinary(Opcode::Div, target, *call);
  if (op == "tile.addc" || op == "tile.subc" || op == "tile.addsc" || op == "tile.subsc")
    return DecodeThreeOperand(op, target, *call);
  if (auto ok = DecodeCompute(op, target, *call)) return *ok;
  return Error(fmt::format("{}: kernel '{}' uses op '{}', which the simulator does not support yet (in `{}`)",
                           span.str(), Name(), op, text));
}

}  // namespace pypto::sim::decode

namespace pypto::sim {

pypto::expected<DecodedKernel, std::string> DecodeKernel(const ir::Function& function, int32_t func_id,
                                                         rt::CoreType core_type, const ir::SocSpec& soc) {
  return decode::Decoder(function, func_id, core_type, soc).Run();
}

}  // namespace pypto::sim
