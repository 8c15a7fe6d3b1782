// OrchestrationEmitter: kernel launches. Each call of a kernel or a Group becomes a CoreTaskArgs
// submit in the C++ and a SubmitStep in the plan (tensors, scalars, block count, deps, dumps), and
// its kernels are registered with their func_ids for the manifest.
#include "orchestration_emitter.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "orchestration_scalars.h"
#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/submit_dumps.h"
#include "pypto/passes/ir_property.h"

namespace pypto::codegen_orch::detail {

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

namespace {

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

bool IsLiteral(const ir::Expr& expr) {
  return expr.Is<ir::ConstInt>() || expr.Is<ir::ConstFloat>() || expr.Is<ir::ConstBool>();
}

}  // namespace

// `pl.dump_tag(t)`: t (the variable, and the results of calls writing it) is marked in every submit
// after this point, in program order; a reshape of t is another tensor. Nothing runs for it; the C++
// marks each such submit's argument with `params.dump(t)`.
ir::Result<bool> OrchestrationEmitter::EmitDumpTag(const ir::Call& call) {
  const auto* var = call.args()[0]->As<ir::Var>();
  if (!var || !bindings_.contains(var))
    return MakeError(DiagnosticKind::InvalidOperation,
                     "pl.dump_tag needs a tensor of the orchestration (a parameter, a pl.create_tensor or a view)",
                     call.span());
  dump_tagged_.insert(var);
  return true;
}

ir::Result<OrchestrationEmitter::GroupMembers> OrchestrationEmitter::MembersOf(const ir::Function& group) const {
  GroupMembers members;
  for (const auto& stmt : ir::FlattenStmts(group.body())) {
    if (stmt->As<ir::ReturnStmt>()) continue;
    const ir::Call* call = nullptr;
    if (const auto* assign = stmt->As<ir::AssignStmt>()) call = assign->value()->As<ir::Call>();
    if (const auto* eval = stmt->As<ir::EvalStmt>()) call = eval->expr()->As<ir::Call>();
    auto member = call ? program_.Find(call->callee()) : nullptr;
    if (!member || (member->type() != ir::FunctionType::AIC && member->type() != ir::FunctionType::AIV))
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("group '{}' may only call one AIC and one AIV kernel", group.name()),
                       stmt->span());
    auto& slot = member->type() == ir::FunctionType::AIC ? members.aic : members.aiv;
    if (slot)
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("group '{}' calls two {} kernels ('{}' and '{}')", group.name(),
                                   ir::FunctionTypeName(member->type()), slot->name(), member->name()),
                       stmt->span());
    const bool same_layout =
        call->args().size() == group.params().size() &&
        std::ranges::equal(call->args(), group.params(),
                           [](const ir::ExprPtr& arg, const ir::VarPtr& param) { return arg.get() == param.get(); });
    if (!same_layout)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("group '{}' member '{}' must take the group's parameters in order: the members "
                                   "of one mixed task share one args[]",
                                   group.name(), member->name()),
                       call->span());
    slot = member;
  }
  if (!members.aic && !members.aiv)
    return MakeError(DiagnosticKind::Syntax, fmt::format("group '{}' calls no kernel", group.name()), group.span());
  return members;
}

// The MixedKernels of a call of a Group: {aic, aiv, aiv again when it is dispatched on both lanes}.
ir::Result<rt::MixedKernels> OrchestrationEmitter::MixedKernelsOf(const ir::Function& group) {
  auto members = MembersOf(group);
  if (!members) return pypto::unexpected(members.error());
  rt::MixedKernels mixed;
  if (members->aic) mixed.aic = FuncId(*members->aic);
  if (members->aiv) {
    mixed.aiv0 = FuncId(*members->aiv);
    if (const bool* dual = ir::FunctionAttr<bool>(*members->aiv, ir::kDualAivDispatchAttr); dual && *dual)
      mixed.aiv1 = mixed.aiv0;
  }
  return mixed;
}

ir::Result<OrchestrationEmitter::Blocks> OrchestrationEmitter::BlocksOf(const ir::Call& call,
                                                                        const ir::Function& callee) {
  const ir::ExprPtr& count = call.core_num();
  if (!count) return Blocks{};
  if (auto literal = ir::AsConstInt(count)) {
    if (*literal < 0 || *literal > std::numeric_limits<int32_t>::max())
      return MakeError(DiagnosticKind::Type, fmt::format("pl.spmd core_num {} is out of range", *literal),
                       call.span());
    return Blocks{.literal = static_cast<int32_t>(*literal), .text = std::to_string(*literal)};
  }
  const auto* scalar = count->type()->As<ir::ScalarType>();
  if (!scalar || !ir::IsInteger(scalar->dtype()))
    return MakeError(DiagnosticKind::Type,
                     fmt::format("the block count of the pl.spmd launch of '{}' must be an integer, got {}",
                                 callee.name(), count->type()->str()),
                     call.span());
  const char* hint = "compute it from literals, scalar parameters, loop variables and tensor extents";
  if (const ir::Call* read = RunTimeCall(count))
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("the block count of the pl.spmd launch of '{}' calls '{}', whose value is only "
                                 "known at run time; the task plan needs it when it is built",
                                 callee.name(), read->is_op_call() ? read->op()->name : read->callee()),
                     call.span(), hint);
  if (const ir::Var* unknown = UnknownScalar(count))
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("the block count of the pl.spmd launch of '{}' reads '{}', which is only known at "
                                 "run time; the task plan needs it when it is built",
                                 callee.name(), unknown->name_hint()),
                     call.span(), hint);
  auto cpp = CppExpr(count);
  if (!cpp) return pypto::unexpected(cpp.error());
  if (count->Is<ir::Var>()) return Blocks{.computed = count, .text = *cpp};  // a C++ variable already
  return Blocks{.computed = count, .text = names_.Take(callee.name() + "_blocks"), .cpp = *cpp};
}

std::string OrchestrationEmitter::KernelIdCpp(int32_t id) {
  return id == rt::kNoKernel ? "INVALID_KERNEL_ID" : std::to_string(id);
}

ir::Result<bool> OrchestrationEmitter::EmitSubmit(const ir::Call& call, const ir::Var* result) {
  auto callee = program_.Find(call.callee());
  if (!callee) return MakeError(DiagnosticKind::Internal, fmt::format("no function '{}'", call.callee()), call.span());
  const bool group = callee->type() == ir::FunctionType::Group;
  if (callee->type() != ir::FunctionType::AIV && callee->type() != ir::FunctionType::AIC && !group)
    return MakeError(DiagnosticKind::Internal,
                     fmt::format("'{}' is a {} function; only AIC, AIV and Group kernels can be submitted yet",
                                 callee->name(), ir::FunctionTypeName(callee->type())),
                     call.span());
  if (call.arg_directions().size() != call.args().size() || call.args().size() != callee->params().size())
    return MakeError(DiagnosticKind::Internal, "call directions were not derived", call.span());
  std::optional<rt::MixedKernels> mixed;
  if (group) {
    auto kernels = MixedKernelsOf(*callee);
    if (!kernels) return pypto::unexpected(kernels.error());
    mixed = *kernels;
  }
  auto blocks = BlocksOf(call, *callee);
  if (!blocks) return pypto::unexpected(blocks.error());
  const int32_t func_id = group ? rt::kNoKernel : FuncId(*callee);
  const bool aic = callee->type() == ir::FunctionType::AIC;
  Separate();
  std::string params = fmt::format("params_t{}", task_count_++);
  SubmitStep step{.submit = rt::PlanSubmit{
                      .func_id = func_id, .core_type = aic ? rt::CoreType::AIC : rt::CoreType::AIV, .mixed = mixed},
                  .call = &call};
  // `as tid`: the submit's TaskId, read off what the submit returns.
  std::string task_name;
  if (const auto& task_id = call.order().task_id) {
    task_name = names_.Take(task_id->name_hint());
    task_names_[task_id.get()] = task_name;
    step.task_id = task_id.get();
  }
  // A block count computed in orchestration code: the submit runs only when it is not 0, and its
  // TaskId is invalid when it does not (the runtime refuses a negative count).
  const bool guarded = blocks->computed != nullptr;
  if (guarded) {
    step.computed_blocks = &call;
    if (!task_name.empty())
      body_ += fmt::format("{}{} = PTO2TaskId::invalid();\n", indent_, TaskIdDecl(task_name));
    if (!blocks->cpp.empty()) body_ += fmt::format("{}const int64_t {} = {};\n", indent_, blocks->text, blocks->cpp);
    body_ += fmt::format("{}if ({} != 0) {{\n", indent_, blocks->text);
    indent_ += "  ";
  } else if (blocks->literal) {
    step.submit.block_num = *blocks->literal;
  }

  // The task takes its tensors first and its scalars after them, each group in parameter order.
  std::string tensor_lines, scalar_lines, dump_lines;
  std::vector<std::optional<Binding>> written(call.args().size());
  const std::vector<size_t> dumped = ir::DumpedArgs(call);  // pl.submit(..., dumps=[...])
  for (size_t i = 0; i < call.args().size(); ++i) {
    const auto& arg = call.args()[i];
    const auto direction = call.arg_directions()[i];
    if (direction == ir::ArgDirection::Scalar) {
      const auto& param = *callee->params()[i];
      ScalarOperand operand{.dtype = ScalarDtype(param, *arg),
                            .what = fmt::format("scalar argument '{}' of '{}'", param.name_hint(), callee->name())};
      std::string cpp;
      if (IsLiteral(*arg)) {
        auto scalar = EncodeScalar(*arg, operand.dtype, operand.what);
        if (!scalar) return pypto::unexpected(scalar.error());
        operand.bits = scalar->bits;
        cpp = scalar->cpp;
      } else {
        auto text = ScalarArgCpp(arg, operand.dtype, operand.what);
        if (!text) return pypto::unexpected(text.error());
        operand.expr = arg;
        cpp = *text;
      }
      scalar_lines += fmt::format("{}{}.add_scalar({});\n", indent_, params, cpp);
      step.scalars.push_back(std::move(operand));
      continue;
    }
    const auto* var = arg->As<ir::Var>();
    auto it = var ? bindings_.find(var) : bindings_.end();
    if (it == bindings_.end())
      return MakeError(DiagnosticKind::Internal, "kernel argument is not a bound tensor", arg->span());
    tensor_lines += fmt::format("{}{}.{}({});\n", indent_, params, AddMethod(direction), it->second.cpp_name);
    const bool dump = dump_tagged_.contains(var) || std::ranges::find(dumped, i) != dumped.end();
    if (dump) dump_lines += fmt::format("{}{}.dump({});\n", indent_, params, it->second.cpp_name);
    step.submit.args.push_back(
        rt::PlanTaskArg{.direction = ToRuntime(direction), .tensor = it->second.ref, .dump = dump});
    if (direction != ir::ArgDirection::Input && direction != ir::ArgDirection::NoDep) written[i] = it->second;
  }
  if (blocks->literal == 0) {  // `pl.spmd(0)`, or a count that folded to 0: nothing to submit
    body_ += fmt::format("{}// '{}' is launched on 0 blocks: nothing to submit\n", indent_, callee->name());
    if (step.task_id) {
      body_ += fmt::format("{}{} = PTO2TaskId::invalid();\n", indent_, TaskIdDecl(task_name));
      steps_->push_back(Step{TaskIdStep{.var = step.task_id}});
    }
    return BindCallResult(call, *callee, result, written);
  }
  body_ += fmt::format("{}CoreTaskArgs {};\n", indent_, params) + tensor_lines + scalar_lines + dump_lines;
  if (auto ok = EmitDependencies(call.order().deps, params, step); !ok) return ok;
  // `with pl.spmd(core_num=N)`: one submit of N blocks.
  if (!blocks->text.empty())
    body_ += fmt::format("{}{}.launch_spec.set_block_num({});\n", indent_, params, blocks->text);
  // `pl.spmd(..., sync_start=True)`: the blocks start only together (a hard syncall needs it).
  if (ir::FindAttr<bool>(call.kwargs(), ir::kSyncStartKwarg).value_or(false)) {
    step.submit.require_sync_start = true;
    body_ += fmt::format("{}{}.launch_spec.set_require_sync_start(true);\n", indent_, params);
  }
  // allow_early_resolve=True: consumers of this launch may be staged before it finishes.
  if (call.order().allow_early_resolve) {
    step.submit.allow_early_resolve = true;
    body_ += fmt::format("{}{}.set_allow_early_resolve(true);\n", indent_, params);
  }
  const std::string captured = task_name.empty() ? "" : (guarded ? task_name : TaskIdDecl(task_name)) + " = ";
  const std::string task_id_suffix = captured.empty() ? "" : ".task_id()";
  if (mixed) {
    const std::string name = fmt::format("mixed_{}", mixed_count_++);
    body_ += fmt::format("{}MixedKernels {} = {{{}, {}, {}}};\n", indent_, name, KernelIdCpp(mixed->aic),
                         KernelIdCpp(mixed->aiv0), KernelIdCpp(mixed->aiv1));
    body_ += fmt::format("{}{}rt_submit_task({}, {}){};\n", indent_, captured, name, params, task_id_suffix);
  } else {
    body_ += fmt::format("{}{}rt_submit_{}_task({}, {}){};\n", indent_, captured, aic ? "aic" : "aiv", func_id,
                         params, task_id_suffix);
  }
  if (guarded) {
    indent_.resize(indent_.size() - 2);
    body_ += indent_ + "}\n";
  }
  steps_->push_back(Step{std::move(step)});
  return BindCallResult(call, *callee, result, written);
}

// A call result is the Out tensor itself: later uses name the same buffer. It keeps the argument's
// pl.dump_tag, since the variable was only renamed (by the user, or by outlining a scope).
ir::Result<bool> OrchestrationEmitter::BindCallResult(const ir::Call& call, const ir::Function& callee,
                                                      const ir::Var* result,
                                                      const std::vector<std::optional<Binding>>& written) {
  if (!result) return true;
  std::optional<size_t> bound;
  if (auto returned = passes::ReturnedParam(callee); returned && written[*returned]) bound = *returned;
  if (!bound) {
    size_t outputs = 0;
    for (size_t i = 0; i < written.size(); ++i)
      if (written[i]) bound = i, ++outputs;
    if (outputs > 1)
      return MakeError(DiagnosticKind::Internal,
                       fmt::format("'{}' writes {} tensors and does not return one of its parameters; cannot tell "
                                   "which one '{}' names",
                                   callee.name(), outputs, result->name_hint()),
                       call.span());
  }
  if (!bound) return true;
  bindings_[result] = *written[*bound];
  if (dump_tagged_.contains(call.args()[*bound]->As<ir::Var>())) dump_tagged_.insert(result);
  return true;
}

int32_t OrchestrationEmitter::FuncId(const ir::Function& callee) {
  auto [it, inserted] = func_ids_.try_emplace(callee.name(), static_cast<int32_t>(func_ids_.size()));
  if (inserted) {
    KernelEntry entry{.func_id = it->second,
                      .name = callee.name(),
                      .core_type = callee.type() == ir::FunctionType::AIC ? "aic" : "aiv"};
    if (const auto* source = ir::FunctionAttr<std::string>(callee, ir::kExternalSourceAttr))
      entry.external_source = *source;
    if (const auto* dirs = ir::FunctionAttr<std::string>(callee, ir::kExternalIncludeDirsAttr))
      entry.external_include_dirs = *dirs;
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

}  // namespace pypto::codegen_orch::detail
