// OrchestrationEmitter: the walk itself. Run checks the pipeline's guarantees, binds the parameters,
// emits each statement of the body (EmitStmt dispatches to the emit_*.cpp files), and expands the
// recorded steps into the plan or keeps them as a DeferredPlan; runtime scopes and the declarations
// hoisted out of them, and the C++ source around the body, live here too.
#include "orchestration_emitter.h"

#include <fmt/format.h>

#include <memory>
#include <utility>

#include "loop_expander.h"
#include "orchestration_scalars.h"
#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"
#include "pypto/passes/ir_property.h"

namespace pypto::codegen_orch::detail {

using ir::DiagnosticKind;
using ir::MakeError;

namespace {

// What the emitter reads from the IR instead of deciding it, each established by a pass of the
// default pipeline; a program lacking one is refused, naming it.
ir::Result<bool> CheckPreconditions(const ir::Program& program) {
  using passes::IRProperty;
  for (IRProperty property : {IRProperty::NoInCoreScopes, IRProperty::CallDirectionsDerived,
                              IRProperty::ReturnParamsExplicit, IRProperty::RuntimeScopesMaterialized,
                              IRProperty::IterArgCarryClassified}) {
    auto holds = passes::VerifyProperty(property, program);
    if (!holds)
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("codegen-orch requires {}: {}", passes::IRPropertyName(property),
                                   holds.error().message),
                       holds.error().span, "lower the program with the default pipeline (passes::Lower) first");
  }
  return true;
}

}  // namespace

std::vector<ir::StmtPtr> StmtsInScope(const ir::RuntimeScopeStmt& scope, const ir::StmtPtr& body) {
  std::vector<ir::StmtPtr> stmts = ir::FlattenStmts(scope.body());
  const auto outer = ir::FlattenStmts(body);
  if (outer.back().get() != &scope) stmts.push_back(outer.back());
  return stmts;
}

ir::Result<Orchestration> OrchestrationEmitter::Run() {
  auto entry = program_.entry();
  if (!entry || entry->type() != ir::FunctionType::Orchestration)
    return MakeError(DiagnosticKind::Internal,
                     fmt::format("program '{}' has no orchestration entry (was it lowered?)", program_.name()));
  result_.function_name = entry->name();
  result_.plan.orchestration_name = entry->name();
  if (auto ok = CheckPreconditions(program_); !ok) return pypto::unexpected(ok.error());
  if (auto ok = BindParams(*entry); !ok) return pypto::unexpected(ok.error());
  // The body is one automatic runtime scope (RuntimeScopesMaterialized), which also holds the
  // intermediates' allocation; the return after it emits nothing. An auto_scope=False entry has only
  // the scopes its author wrote. Upstream's executor opens the run's outer scope (depth 0) around the
  // orchestration entry, so the body's PTO2_SCOPE() is depth 1 there: the plan opens it as a scope
  // too (rather than running the body in the plan's outer scope), so that the simulator runs every
  // task at the depth, and in the ring, the C++ it writes runs it on a device.
  const ir::RuntimeScopeStmt* body_scope = passes::AsAutoRuntimeScope(entry->body());
  const auto stmts = body_scope ? StmtsInScope(*body_scope, entry->body()) : ir::FlattenStmts(entry->body());
  if (body_scope) body_ += "  PTO2_SCOPE() {\n";
  else indent_ = "  ";
  if (auto ok = AllocateIntermediates(stmts); !ok) return pypto::unexpected(ok.error());
  for (const auto& stmt : stmts)
    if (auto ok = EmitStmt(stmt); !ok) return pypto::unexpected(ok.error());
  if (body_scope) {
    body_ += "  }\n";
    ScopeStep body{.manual = false, .body = std::move(steps_root_)};
    steps_root_.clear();
    steps_root_.push_back(Step{std::move(body)});
  }
  result_.cpp_source = Source(*entry);
  if (auto ok = CheckLoopShapesBeforeReads(*entry); !ok) return pypto::unexpected(ok.error());
  if (!reads_.refs.empty()) {  // the plan depends on what the tensors hold: each run expands it
    result_.deferred =
        std::make_shared<DeferredPlan>(DeferredPlan{std::move(steps_root_), std::move(reads_), result_.plan.views});
    return std::move(result_);
  }
  LoopExpander expander(result_.plan, result_.plan.submits, result_.plan.views);
  if (auto ok = expander.Run(steps_root_); !ok) return pypto::unexpected(ok.error());
  return std::move(result_);
}

ir::Result<bool> OrchestrationEmitter::BindParams(const ir::Function& entry) {
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
    // The runtime counts an FP4 tensor in bytes, two values each (torch's float4_e2m1fn_x2).
    if (tensor->dtype() == ir::DataType::FP4 && !tensor->shape().empty() && tensor->shape().back() > 0)
      plan_tensor.shape.back() /= 2;
    uint32_t index = static_cast<uint32_t>(result_.plan.params.size());
    result_.plan.params.push_back(std::move(plan_tensor));
    // A parameter the entry declared a plain pl.Tensor stays IN in the signature though a kernel
    // writes it (DeriveCallDirections promoted it for the submits): the device runtime then skips its
    // copy-back, as seed 001 says it does and as the simulator's run does.
    const bool declared_in = entry.attrs().contains(ir::DeclaredInAttr(param->name_hint()));
    result_.signature.push_back(DirectionToken(declared_in ? ir::ParamDirection::In : entry.param_directions()[i]));
    std::string name = "ext_" + param->name_hint();
    params_ += fmt::format("  const ChipTensor& {} = orch_args.tensor({}).ref();\n", name, index);
    bindings_[param.get()] = Binding{rt::PlanTensorRef{rt::PlanTensorRef::Kind::Param, index}, name};
  }
  return true;
}

ir::Result<bool> OrchestrationEmitter::EmitStmt(const ir::StmtPtr& stmt) {
  if (stmt->Is<ir::ReturnStmt>()) {
    if (loop_depth_ > 0 || if_depth_ > 0)
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("return inside an orchestration {} is not supported", loop_depth_ ? "loop" : "if"),
                       stmt->span());
    return true;
  }
  if (IsTensorCreate(stmt)) return EmitCreate(*stmt->As<ir::AssignStmt>());  // see AllocateIntermediates
  if (const auto* loop = stmt->As<ir::ForStmt>()) return EmitLoop(*loop);
  if (stmt->Is<ir::WhileStmt>())  // the task plan needs each loop's trip count
    return MakeError(DiagnosticKind::Syntax, "while loops are supported inside kernels only", stmt->span(),
                     "use pl.range(...) in orchestration code");
  if (const auto* branch = stmt->As<ir::IfStmt>()) return EmitIf(*branch);
  if (const auto* scope = stmt->As<ir::RuntimeScopeStmt>()) return EmitRuntimeScope(*scope);
  if (const auto* yield = stmt->As<ir::YieldStmt>()) return EmitLoopYield(*yield);
  const ir::Call* call = nullptr;
  const ir::Var* result = nullptr;
  if (const auto* assign = stmt->As<ir::AssignStmt>()) {
    call = assign->value()->As<ir::Call>();
    result = assign->var().get();
    if (assign->var()->type()->As<ir::ArrayType>()) return EmitTaskIdArray(*assign);
    if (ir::IsTaskId(*assign->var()->type())) return EmitTaskIdDef(*assign);
    if ((!call || AsScalarCast(*call)) && assign->var()->type()->As<ir::ScalarType>())
      return EmitScalarDef(*assign);
    if (call && call->is_op_call() && call->op()->name == "tensor.read") return EmitTensorRead(*assign, *call);
    if (call && call->is_op_call() && call->op()->name == "tensor.extent") return EmitTensorExtent(*assign, *call);
    if (call && call->is_op_call() && call->op()->name == "tensor.reshape") return EmitReshape(*assign, *call);
    if (call && call->is_op_call() && call->op()->name == "tensor.slice") return EmitSlice(*assign, *call);
    if (call && call->is_op_call() && call->op()->name == "tensor.transpose") return EmitTranspose(*assign, *call);
    // `x_flat = x`: another name for the same tensor.
    if (const auto* source = assign->value()->As<ir::Var>(); source && bindings_.contains(source)) {
      bindings_[result] = bindings_.at(source);
      return true;
    }
  } else if (const auto* eval = stmt->As<ir::EvalStmt>()) {
    call = eval->expr()->As<ir::Call>();
    if (call && call->is_op_call() && call->op()->name == "tensor.dump_tag") return EmitDumpTag(*call);
  }
  if (call && call->is_op_call())
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("'{}' is not supported in orchestration code yet; only kernel calls, "
                                 "pl.create_tensor, loops and scalar arithmetic are",
                                 call->op()->name),
                     stmt->span());
  if (!call)
    return MakeError(DiagnosticKind::Syntax,
                     "only kernel calls, pl.create_tensor, loops and scalar arithmetic are supported in "
                     "orchestration code yet",
                     stmt->span());
  return EmitSubmit(*call, result);
}

// `with pl.manual_scope():` / `with pl.scope():`: PTO2_SCOPE(PTO2ScopeMode::MANUAL) { ... } around its
// body (PTO2_SCOPE() { ... } for an auto one). The braces make a C++ block, so the TaskIds, TaskId
// arrays and scalars defined inside are declared before the outermost such scope (Declared), where
// code after it sees them.
ir::Result<bool> OrchestrationEmitter::EmitRuntimeScope(const ir::RuntimeScopeStmt& scope) {
  Separate();
  const bool outermost = hoisted_ == nullptr;
  std::string hoisted, outer_body;
  if (outermost) {
    outer_body = std::exchange(body_, "");
    hoisted_ = &hoisted;
    hoist_indent_ = indent_;
  }
  body_ += indent_ + (scope.manual() ? "PTO2_SCOPE(PTO2ScopeMode::MANUAL) {\n" : "PTO2_SCOPE() {\n");
  ScopeStep expanded{.manual = scope.manual()};
  std::vector<Step>* outer_steps = std::exchange(steps_, &expanded.body);
  indent_ += "  ";
  block_start_ = true;
  ir::Result<bool> ok = true;
  for (const auto& stmt : ir::FlattenStmts(scope.body()))
    if (ok = EmitStmt(stmt); !ok) break;
  indent_.resize(indent_.size() - 2);
  steps_ = outer_steps;
  body_ += indent_ + "}\n";
  block_start_ = after_scalar_ = false;
  if (outermost) {
    body_ = outer_body + hoisted + body_;
    hoisted_ = nullptr;
  }
  if (!ok) return ok;
  steps_->push_back(Step{std::move(expanded)});
  return true;
}

// A blank line between the items of a block (submits, loops, runs of scalar definitions); scalar
// definitions stay next to the item that follows them.
void OrchestrationEmitter::Separate() {
  if (!block_start_ && !after_scalar_) body_ += "\n";
  block_start_ = after_scalar_ = false;
}

// The start of a statement defining `name` of C++ type `type`: its declaration, or inside a runtime
// scope (a C++ block) just the name, declared before the outermost scope so that code after the scope
// sees it.
std::string OrchestrationEmitter::Declared(std::string_view type, const std::string& name) {
  if (!hoisted_) return fmt::format("{} {}", type, name);
  *hoisted_ += fmt::format("{}{} {};\n", hoist_indent_, type, name);
  return name;
}

std::string OrchestrationEmitter::TaskIdDecl(const std::string& name) { return Declared("PTO2TaskId", name); }

std::string OrchestrationEmitter::Source(const ir::Function& entry) const {
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

}  // namespace pypto::codegen_orch::detail
