// Walks the lowered orchestration once, producing the C++ source and the task plan together.
//
// The orchestration body is straight-line: `x = pl.create_tensor(...)` makes plan intermediates (one
// alloc_tensors at scope entry in the C++), and each kernel call becomes one submit whose tensors come
// first and whose scalar literals follow, encoded as 64-bit patterns (add_scalar).
#include "pypto/codegen_orch/orchestration.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <bit>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"

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

// A scalar kernel argument: its 64-bit pattern for the plan and the same value as C++ for add_scalar.
struct ScalarArg {
  uint64_t bits = 0;
  std::string cpp;
};

bool IsUnsignedInteger(ir::DataType dtype) {
  auto code = static_cast<uint8_t>(dtype);
  return code >= 0x20 && code <= 0x24;
}

// The shortest decimal text that reads back as the same value, as a C++ floating literal.
template <typename T>
std::string FloatLiteral(T value) {
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

// Encodes a literal for a kernel scalar parameter of `dtype`, as upstream's add_scalar receives it:
// floats as their bit pattern zero-extended (to_u64), integers sign- or zero-extended to 64 bits.
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
    const int bits = ir::DataTypeBits(dtype);
    if (bits < 64) {
      const bool is_unsigned = IsUnsignedInteger(dtype);
      const int64_t lowest = is_unsigned ? 0 : -(int64_t{1} << (bits - 1));
      const int64_t highest = is_unsigned ? (int64_t{1} << bits) - 1 : (int64_t{1} << (bits - 1)) - 1;
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

// The dtype a scalar argument is passed as: the callee parameter's, or the literal's own.
ir::DataType ScalarDtype(const ir::Var& param, const ir::Expr& arg) {
  if (const auto* scalar = param.type()->As<ir::ScalarType>()) return scalar->dtype();
  if (const auto* scalar = arg.type()->As<ir::ScalarType>()) return scalar->dtype();
  return ir::DataType::INT64;
}

// The parameter a kernel returns as its single result: `return output`, possibly through values that
// alias the tensor an op wrote (`out = pl.store(tile, [0, 0], output); return out`).
std::optional<size_t> ReturnedParam(const ir::Function& kernel) {
  std::unordered_map<const ir::Var*, const ir::Var*> alias_of;
  auto root = [&](const ir::Var* var) {
    for (auto it = alias_of.find(var); it != alias_of.end(); it = alias_of.find(var)) var = it->second;
    return var;
  };
  const ir::ReturnStmt* ret = nullptr;
  for (const auto& stmt : ir::FlattenStmts(kernel.body())) {
    if (const auto* assign = stmt->As<ir::AssignStmt>()) {
      const auto* call = assign->value()->As<ir::Call>();
      if (call && call->is_op_call() && call->op()->writes_arg)
        if (const auto* dest = call->args()[*call->op()->writes_arg]->As<ir::Var>())
          alias_of[assign->var().get()] = dest;
    }
    if (const auto* r = stmt->As<ir::ReturnStmt>()) ret = r;
  }
  if (!ret || ret->values().size() != 1) return std::nullopt;
  const auto* value = ret->values()[0]->As<ir::Var>();
  if (!value) return std::nullopt;
  const ir::Var* returned = root(value);
  for (size_t i = 0; i < kernel.params().size(); ++i)
    if (kernel.params()[i].get() == returned) return i;
  return std::nullopt;
}

// C++ names for intermediates: identifiers, unique, and clear of the names the emitter generates.
class CppNames {
 public:
  std::string Take(std::string_view hint) {
    static const std::set<std::string_view> kReserved = {
        "alignas", "auto",     "bool",   "break",  "case",     "char",      "class",  "const",    "continue",
        "default", "delete",   "do",     "double", "else",     "enum",      "extern", "false",    "float",
        "for",     "goto",     "if",     "inline", "int",      "long",      "new",    "operator", "private",
        "public",  "return",   "short",  "signed", "sizeof",   "static",    "struct", "switch",   "template",
        "this",    "true",     "typedef", "union", "unsigned", "using",     "void",   "volatile", "while",
        "orch_args", "alloc_tensors", "to_u64", "DataType", "ChipTensor", "CoreTaskArgs", "TensorCreateInfo",
        "TaskOutputTensors"};
    std::string name(hint);
    for (char& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
    const bool generated_prefix = name.starts_with("ext_") || name.starts_with("params_t") ||
                                  name.starts_with("alloc_") || name.starts_with("__");
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) || kReserved.contains(name) ||
        generated_prefix)
      name.insert(0, "t_");
    // The intermediate's TensorCreateInfo and shape array are named after it, so those must be free too.
    auto free = [&](const std::string& candidate) {
      return !taken_.contains(candidate) && !taken_.contains(candidate + "_ci") &&
             !taken_.contains(candidate + "_ci_shapes");
    };
    std::string unique = name;
    for (int n = 1; !free(unique); ++n) unique = fmt::format("{}_{}", name, n);
    taken_.insert({unique, unique + "_ci", unique + "_ci_shapes"});
    return unique;
  }

 private:
  std::set<std::string> taken_;
};

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
    const auto stmts = ir::FlattenStmts(entry->body());
    body_ += "  PTO2_SCOPE() {\n";
    if (auto ok = AllocateIntermediates(stmts); !ok) return pypto::unexpected(ok.error());
    for (const auto& stmt : stmts)
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
      if (param->type()->As<ir::ScalarType>())
        return MakeError(DiagnosticKind::Type,
                         fmt::format("orchestration parameter '{}' is a scalar ({}); scalar parameters of the "
                                     "orchestration entry are not supported yet",
                                     param->name_hint(), param->type()->str()),
                         param->span(), "pass the value as a literal in the kernel call instead");
      if (!tensor)
        return MakeError(DiagnosticKind::Type,
                         fmt::format("orchestration parameter '{}' must be a tensor, got {}", param->name_hint(),
                                     param->type()->str()),
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

  static bool IsTensorCreate(const ir::StmtPtr& stmt) {
    const auto* assign = stmt->As<ir::AssignStmt>();
    const auto* call = assign ? assign->value()->As<ir::Call>() : nullptr;
    return call && call->is_op_call() && call->op()->name == "tensor.create";
  }

  // Every pl.create_tensor of the body becomes a plan intermediate. As upstream does, the C++ allocates
  // them all with one alloc_tensors at scope entry, before the first task.
  ir::Result<bool> AllocateIntermediates(const std::vector<ir::StmtPtr>& stmts) {
    std::vector<std::string> names;
    for (const auto& stmt : stmts) {
      if (!IsTensorCreate(stmt)) continue;
      const auto& var = stmt->As<ir::AssignStmt>()->var();
      const auto* tensor = var->type()->As<ir::TensorType>();
      if (!tensor)
        return MakeError(DiagnosticKind::Internal, fmt::format("'{}' is created but is not a tensor", var->name_hint()),
                         stmt->span());
      if (tensor->dtype() == ir::DataType::FP4)
        return MakeError(DiagnosticKind::Type,
                         fmt::format("intermediate '{}' is FP4; packed FP4 intermediates are not supported yet",
                                     var->name_hint()),
                         stmt->span());
      if (tensor->shape().empty() || tensor->shape().size() > PYPTO_MAX_TENSOR_DIMS)
        return MakeError(DiagnosticKind::Type,
                         fmt::format("intermediate '{}' has rank {}; the runtime takes 1 to {} dimensions",
                                     var->name_hint(), tensor->shape().size(), PYPTO_MAX_TENSOR_DIMS),
                         stmt->span());
      auto dtype = RuntimeDataType(tensor->dtype());
      if (!dtype) {
        auto error = dtype.error();
        error.span = stmt->span();
        return pypto::unexpected(std::move(error));
      }
      rt::PlanTensor plan_tensor{.name = var->name_hint(), .dtype = *dtype};
      std::vector<std::string> dims;
      for (auto dim : tensor->shape()) {
        if (dim <= 0 || dim > std::numeric_limits<uint32_t>::max())
          return MakeError(DiagnosticKind::Type,
                           fmt::format("intermediate '{}' has dimension {}", var->name_hint(), dim), stmt->span());
        plan_tensor.shape.push_back(static_cast<uint32_t>(dim));
        dims.push_back(std::to_string(dim));
      }
      std::string name = names_.Take(var->name_hint());
      body_ += fmt::format("    uint32_t {0}_ci_shapes[{1}] = {{{2}}};\n", name, dims.size(), fmt::join(dims, ", "));
      body_ += fmt::format("    TensorCreateInfo {0}_ci({0}_ci_shapes, {1}, DataType::{2});\n", name, dims.size(),
                           rt::DtypeName(*dtype));
      uint32_t index = static_cast<uint32_t>(result_.plan.intermediates.size());
      result_.plan.intermediates.push_back(std::move(plan_tensor));
      bindings_[var.get()] = Binding{rt::PlanTensorRef{rt::PlanTensorRef::Kind::Intermediate, index}, name};
      names.push_back(name);
    }
    if (names.empty()) return true;
    std::vector<std::string> infos;
    for (const auto& name : names) infos.push_back(name + "_ci");
    body_ += fmt::format("    TaskOutputTensors alloc_0 = alloc_tensors({});\n", fmt::join(infos, ", "));
    for (size_t i = 0; i < names.size(); ++i)
      body_ += fmt::format("    const ChipTensor& {} = alloc_0.get_ref({});\n", names[i], i);
    body_ += "\n";
    return true;
  }

  ir::Result<bool> EmitStmt(const ir::StmtPtr& stmt) {
    if (stmt->Is<ir::ReturnStmt>() || IsTensorCreate(stmt)) return true;
    const ir::Call* call = nullptr;
    const ir::Var* result = nullptr;
    if (const auto* assign = stmt->As<ir::AssignStmt>()) {
      call = assign->value()->As<ir::Call>();
      result = assign->var().get();
    } else if (const auto* eval = stmt->As<ir::EvalStmt>()) {
      call = eval->expr()->As<ir::Call>();
    }
    if (call && call->is_op_call())
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("'{}' is not supported in orchestration code yet; only kernel calls and "
                                   "pl.create_tensor are",
                                   call->op()->name),
                       stmt->span());
    if (!call)
      return MakeError(DiagnosticKind::Syntax,
                       "only kernel calls and pl.create_tensor are supported in orchestration code yet", stmt->span());
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
    if (call.arg_directions().size() != call.args().size() || call.args().size() != callee->params().size())
      return MakeError(DiagnosticKind::Internal, "call directions were not derived", call.span());
    int32_t func_id = FuncId(*callee);
    bool aic = callee->type() == ir::FunctionType::AIC;
    if (task_count_ > 0) body_ += "\n";
    std::string params = fmt::format("params_t{}", task_count_++);
    rt::PlanSubmit submit{.func_id = func_id, .core_type = aic ? rt::CoreType::AIC : rt::CoreType::AIV};

    // The task takes its tensors first and its scalars after them, each group in parameter order.
    std::string tensor_lines, scalar_lines;
    std::vector<rt::PlanTaskArg> scalar_args;
    std::vector<std::optional<Binding>> written(call.args().size());
    for (size_t i = 0; i < call.args().size(); ++i) {
      const auto& arg = call.args()[i];
      const auto direction = call.arg_directions()[i];
      if (direction == ir::ArgDirection::Scalar) {
        const auto& param = *callee->params()[i];
        auto scalar = EncodeScalar(*arg, ScalarDtype(param, *arg),
                                   fmt::format("scalar argument '{}' of '{}'", param.name_hint(), callee->name()));
        if (!scalar) return pypto::unexpected(scalar.error());
        scalar_lines += fmt::format("    {}.add_scalar({});\n", params, scalar->cpp);
        scalar_args.push_back(rt::PlanTaskArg{.direction = rt::ArgDirection::Scalar, .scalar = scalar->bits});
        continue;
      }
      const auto* var = arg->As<ir::Var>();
      auto it = var ? bindings_.find(var) : bindings_.end();
      if (it == bindings_.end())
        return MakeError(DiagnosticKind::Internal, "kernel argument is not a bound tensor", arg->span());
      tensor_lines += fmt::format("    {}.{}({});\n", params, AddMethod(direction), it->second.cpp_name);
      submit.args.push_back(rt::PlanTaskArg{.direction = ToRuntime(direction), .tensor = it->second.ref});
      if (direction != ir::ArgDirection::Input && direction != ir::ArgDirection::NoDep) written[i] = it->second;
    }
    submit.args.insert(submit.args.end(), scalar_args.begin(), scalar_args.end());
    body_ += fmt::format("    CoreTaskArgs {};\n", params) + tensor_lines + scalar_lines;
    body_ += fmt::format("    rt_submit_{}_task({}, {});\n", aic ? "aic" : "aiv", func_id, params);
    result_.plan.submits.push_back(std::move(submit));
    if (!result) return true;

    // A call result is the Out tensor itself: later uses name the same buffer.
    std::optional<Binding> bound;
    if (auto returned = ReturnedParam(*callee); returned && written[*returned]) bound = written[*returned];
    if (!bound) {
      size_t outputs = 0;
      for (const auto& w : written)
        if (w) bound = w, ++outputs;
      if (outputs > 1)
        return MakeError(DiagnosticKind::Internal,
                         fmt::format("'{}' writes {} tensors and does not return one of its parameters; cannot tell "
                                     "which one '{}' names",
                                     callee->name(), outputs, result->name_hint()),
                         call.span());
    }
    if (bound) bindings_[result] = *bound;
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
  CppNames names_;
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
