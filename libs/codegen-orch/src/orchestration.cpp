// Walks the lowered orchestration once, producing the C++ source and the task plan together.
#include "pypto/codegen_orch/orchestration.h"

#include <fmt/format.h>

#include <map>
#include <unordered_map>

#include "pypto/ir/functor.h"

namespace pypto::codegen_orch {
namespace {

using ir::DiagnosticKind;
using ir::MakeError;

const char* DirectionToken(ir::ParamDirection direction) {
  switch (direction) {
    case ir::ParamDirection::In: return "IN";
    case ir::ParamDirection::Out: return "OUT";
    case ir::ParamDirection::InOut: return "INOUT";
  }
  return "IN";
}

rt::ArgDirection ToRuntime(ir::ArgDirection direction) {
  switch (direction) {
    case ir::ArgDirection::Input: return rt::ArgDirection::Input;
    case ir::ArgDirection::Output: return rt::ArgDirection::Output;
    case ir::ArgDirection::InOut: return rt::ArgDirection::InOut;
    case ir::ArgDirection::OutputExisting: return rt::ArgDirection::OutputExisting;
    case ir::ArgDirection::NoDep: return rt::ArgDirection::NoDep;
    case ir::ArgDirection::Scalar: return rt::ArgDirection::Scalar;
  }
  return rt::ArgDirection::Input;
}

// The CoreTaskArgs method for a call-site direction.
const char* AddMethod(ir::ArgDirection direction) {
  switch (direction) {
    case ir::ArgDirection::Input: return "add_input";
    case ir::ArgDirection::Output:
    case ir::ArgDirection::OutputExisting: return "add_output";
    case ir::ArgDirection::InOut: return "add_inout";
    case ir::ArgDirection::NoDep: return "add_no_dep";
    case ir::ArgDirection::Scalar: return "add_scalar";
  }
  return "add_input";
}

class OrchestrationEmitter {
 public:
  explicit OrchestrationEmitter(const ir::Program& program) : program_(program) {}

  ir::Result<Orchestration> Run() {
    auto entry = program_.entry();
    if (!entry || entry->type() != ir::FunctionType::Orchestration)
      return MakeError(DiagnosticKind::Internal,
                       fmt::format("program '{}' has no orchestration entry (was it lowered?)", program_.name()));
    result_.function_name = entry->name();
    result_.plan.orchestration_name = entry->name();
    if (auto ok = BindParams(*entry); !ok) return pypto::unexpected(ok.error());
    body_ += "  PTO2_SCOPE() {\n";
    for (const auto& stmt : ir::FlattenStmts(entry->body()))
      if (auto ok = EmitStmt(stmt); !ok) return pypto::unexpected(ok.error());
    body_ += "  }\n";
    result_.cpp_source = Source(*entry);
    return std::move(result_);
  }

 private:
  ir::Result<bool> BindParams(const ir::Function& entry) {
    for (size_t i = 0; i < entry.params().size(); ++i) {
      const auto& param = entry.params()[i];
      const auto* tensor = param->type()->As<ir::TensorType>();
      if (!tensor)
        return MakeError(DiagnosticKind::Type,
                         fmt::format("orchestration parameter '{}' must be a tensor (scalars come later)",
                                     param->name_hint()),
                         param->span());
      auto dtype = RuntimeDataType(tensor->dtype());
      if (!dtype) return pypto::unexpected(dtype.error());
      rt::PlanTensor plan_tensor{.name = param->name_hint(), .dtype = *dtype};
      for (auto dim : tensor->shape()) plan_tensor.shape.push_back(static_cast<uint32_t>(dim));
      uint32_t index = static_cast<uint32_t>(result_.plan.params.size());
      result_.plan.params.push_back(std::move(plan_tensor));
      result_.signature.push_back(DirectionToken(entry.param_directions()[i]));
      std::string name = "ext_" + param->name_hint();
      params_ += fmt::format("  const ChipTensor& {} = orch_args.tensor({}).ref();\n", name, index);
      bindings_[param.get()] = Binding{rt::PlanTensorRef{rt::PlanTensorRef::Kind::Param, index}, name};
    }
    return true;
  }

  ir::Result<bool> EmitStmt(const ir::StmtPtr& stmt) {
    if (stmt->Is<ir::ReturnStmt>()) return true;
    const ir::Call* call = nullptr;
    const ir::Var* result = nullptr;
    if (const auto* assign = stmt->As<ir::AssignStmt>()) {
      call = assign->value()->As<ir::Call>();
      result = assign->var().get();
    } else if (const auto* eval = stmt->As<ir::EvalStmt>()) {
      call = eval->expr()->As<ir::Call>();
    }
    if (!call || call->is_op_call())
      return MakeError(DiagnosticKind::Syntax, "only kernel calls are supported in orchestration code yet",
                       stmt->span());
    return EmitSubmit(*call, result);
  }

  ir::Result<bool> EmitSubmit(const ir::Call& call, const ir::Var* result) {
    auto callee = program_.Find(call.callee());
    if (!callee) return MakeError(DiagnosticKind::Internal, fmt::format("no function '{}'", call.callee()), call.span());
    if (callee->type() != ir::FunctionType::AIV && callee->type() != ir::FunctionType::AIC)
      return MakeError(DiagnosticKind::Internal,
                       fmt::format("'{}' is a {} function; only AIC and AIV kernels can be submitted yet", callee->name(),
                                   ir::FunctionTypeName(callee->type())),
                       call.span());
    if (call.arg_directions().size() != call.args().size())
      return MakeError(DiagnosticKind::Internal, "call directions were not derived", call.span());
    int32_t func_id = FuncId(*callee);
    bool aic = callee->type() == ir::FunctionType::AIC;
    std::string params = fmt::format("params_t{}", task_count_++);
    rt::PlanSubmit submit{.func_id = func_id, .core_type = aic ? rt::CoreType::AIC : rt::CoreType::AIV};

    body_ += fmt::format("    CoreTaskArgs {};\n", params);
    const Binding* written = nullptr;
    for (size_t i = 0; i < call.args().size(); ++i) {
      const auto* var = call.args()[i]->As<ir::Var>();
      auto it = var ? bindings_.find(var) : bindings_.end();
      if (it == bindings_.end())
        return MakeError(DiagnosticKind::Internal, "kernel argument is not a bound tensor", call.args()[i]->span());
      auto direction = call.arg_directions()[i];
      body_ += fmt::format("    {}.{}({});\n", params, AddMethod(direction), it->second.cpp_name);
      submit.args.push_back(rt::PlanTaskArg{.direction = ToRuntime(direction), .tensor = it->second.ref});
      if (direction != ir::ArgDirection::Input) written = &it->second;
    }
    body_ += fmt::format("    rt_submit_{}_task({}, {});\n", aic ? "aic" : "aiv", func_id, params);
    // A call result is the Out tensor itself: later uses name the same buffer.
    if (result && written) bindings_[result] = *written;
    result_.plan.submits.push_back(std::move(submit));
    return true;
  }

  int32_t FuncId(const ir::Function& callee) {
    auto [it, inserted] = func_ids_.try_emplace(callee.name(), static_cast<int32_t>(func_ids_.size()));
    if (inserted) {
      KernelEntry entry{.func_id = it->second,
                        .name = callee.name(),
                        .core_type = callee.type() == ir::FunctionType::AIC ? "aic" : "aiv"};
      for (size_t i = 0; i < callee.params().size(); ++i)
        if (callee.params()[i]->type()->As<ir::TensorType>())
          entry.signature.push_back(DirectionToken(callee.param_directions()[i]));
      result_.plan.kernels.push_back(rt::PlanKernel{
          .func_id = it->second,
          .name = callee.name(),
          .core_type = callee.type() == ir::FunctionType::AIC ? rt::CoreType::AIC : rt::CoreType::AIV});
      result_.kernels.push_back(std::move(entry));
    }
    return it->second;
  }

  std::string Source(const ir::Function& entry) const {
    return fmt::format(
        "// Orchestration of '{0}' (program {1}), generated by pypto {2}.\n"
        "#include <stddef.h>\n"
        "#include <stdint.h>\n"
        "#include <stdio.h>\n"
        "\n"
        "#include \"pto_orchestration_api.h\"\n"
        "\n"
        "extern \"C\" {{\n"
        "\n"
        "PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& orch_args) {{\n"
        "  (void)orch_args;\n"
        "  return PTO2OrchestrationConfig{{\n"
        "      .expected_arg_count = {3},\n"
        "  }};\n"
        "}}\n"
        "\n"
        "void aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {{\n"
        "{4}\n"
        "{5}"
        "}}\n"
        "\n"
        "}}  // extern \"C\"\n",
        entry.name(), program_.name(), PYPTO_VERSION, entry.params().size(), params_, body_);
  }

  struct Binding {
    rt::PlanTensorRef ref;
    std::string cpp_name;
  };

  const ir::Program& program_;
  Orchestration result_;
  std::unordered_map<const ir::Var*, Binding> bindings_;
  std::map<std::string, int32_t> func_ids_;
  std::string params_, body_;
  int task_count_ = 0;
};

}  // namespace

ir::Result<uint8_t> RuntimeDataType(ir::DataType dtype) {
  switch (dtype) {
    case ir::DataType::FP32: return PYPTO_RT_FLOAT32;
    case ir::DataType::FP16: return PYPTO_RT_FLOAT16;
    case ir::DataType::BF16: return PYPTO_RT_BFLOAT16;
    case ir::DataType::INT8: return PYPTO_RT_INT8;
    case ir::DataType::INT16: return PYPTO_RT_INT16;
    case ir::DataType::INT32: return PYPTO_RT_INT32;
    case ir::DataType::INT64: return PYPTO_RT_INT64;
    case ir::DataType::UINT8: return PYPTO_RT_UINT8;
    case ir::DataType::UINT16: return PYPTO_RT_UINT16;
    case ir::DataType::UINT32: return PYPTO_RT_UINT32;
    case ir::DataType::UINT64: return PYPTO_RT_UINT64;
    case ir::DataType::BOOL: return PYPTO_RT_BOOL;
    case ir::DataType::FP8E4M3FN: return PYPTO_RT_FP8E4M3FN;
    case ir::DataType::FP8E8M0: return PYPTO_RT_FP8E8M0;
    case ir::DataType::FP4: return PYPTO_RT_FP4E2M1;
    default: break;
  }
  return MakeError(DiagnosticKind::Type,
                   fmt::format("tensors of dtype {} cannot be passed to the runtime", ir::DataTypeName(dtype)));
}

ir::Result<Orchestration> GenerateOrchestration(const ir::Program& lowered) {
  return OrchestrationEmitter(lowered).Run();
}

}  // namespace pypto::codegen_orch
