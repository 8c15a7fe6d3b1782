// OrchestrationEmitter: pl.create_tensor. Every create of the body becomes plan intermediates, all
// allocated at scope entry; a create that a loop runs again takes a buffer of a pool in each run, and
// one with init_value is filled again there.
#include "orchestration_emitter.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <ranges>
#include <utility>

#include "orchestration_scalars.h"
#include "pypto/ir/dynamic_extent.h"
#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"

namespace pypto::codegen_orch::detail {

using ir::DiagnosticKind;
using ir::MakeError;

bool OrchestrationEmitter::IsTensorCreate(const ir::StmtPtr& stmt) {
  const auto* assign = stmt->As<ir::AssignStmt>();
  const auto* call = assign ? assign->value()->As<ir::Call>() : nullptr;
  return call && call->is_op_call() && call->op()->name == "tensor.create";
}

// The pl.create_tensor statements of a body, in loops and runtime scopes too, in program order.
// `carried` holds the Rebind carries in scope: a loop's are in scope in its body and after it, those
// of a loop body or an if branch end with it, and a runtime scope's stay (the C++ declares its
// variables before the scope).
void OrchestrationEmitter::CollectTensorCreates(const std::vector<ir::StmtPtr>& stmts, bool repeats,
                                                std::vector<const ir::Var*>& carried,
                                                std::vector<TensorCreate>& creates) {
  for (const auto& stmt : stmts) {
    if (IsTensorCreate(stmt)) {
      const auto& var = stmt->As<ir::AssignStmt>()->var();
      TensorCreate create{.stmt = stmt, .repeated = repeats};
      const auto* tensor = var->type()->As<ir::TensorType>();
      if (repeats && tensor)
        for (const ir::Var* slot : carried)
          if (slot->type()->As<ir::TensorType>()->dtype() == tensor->dtype()) create.carried.push_back(slot);
      creates.push_back(std::move(create));
    }
    if (const auto* loop = stmt->As<ir::ForStmt>()) {
      std::vector<const ir::Var*> slots;
      for (const auto& iter_arg : loop->iter_args())
        if (iter_arg.carry == ir::CarryKind::Rebind) slots.push_back(iter_arg.var.get());
      std::vector<const ir::Var*> in_body = carried;
      in_body.insert(in_body.end(), slots.begin(), slots.end());
      CollectTensorCreates(ir::FlattenStmts(loop->body()), repeats || !RunsOnce(*loop), in_body, creates);
      carried.insert(carried.end(), slots.begin(), slots.end());
    }
    if (const auto* scope = stmt->As<ir::RuntimeScopeStmt>())
      CollectTensorCreates(ir::FlattenStmts(scope->body()), repeats, carried, creates);
    if (const auto* branch = stmt->As<ir::IfStmt>()) {
      for (const auto& body : {branch->then_body(), branch->else_body()}) {
        if (!body) continue;
        std::vector<const ir::Var*> in_branch = carried;
        CollectTensorCreates(ir::FlattenStmts(body), repeats, in_branch, creates);
      }
    }
  }
}

// Whether a loop certainly makes one iteration (constant bounds, one step from start to stop).
bool OrchestrationEmitter::RunsOnce(const ir::ForStmt& loop) {
  auto start = ir::AsConstInt(loop.start()), stop = ir::AsConstInt(loop.stop()), step = ir::AsConstInt(loop.step());
  if (!start || !stop || !step || *step == 0) return false;
  return *step > 0 ? *start < *stop && *stop - *start <= *step : *start > *stop && *start - *stop <= -*step;
}

// `pl.create_tensor(..., init_value=v)`: the plan's starting value and the C++ pre-fill.
void OrchestrationEmitter::SetInitialValue(const ir::AssignStmt& create, const std::string& name,
                                           rt::PlanTensor& plan_tensor) {
  const auto* call = create.value()->As<ir::Call>();
  const auto init = ir::FindAttr<double>(call->kwargs(), "init_value");
  if (!init) return;
  const ir::DataType dtype = create.var()->type()->As<ir::TensorType>()->dtype();
  plan_tensor.initial_bits = ElementBits(*init, dtype);
  if (*init == 0) {
    body_ += fmt::format("    {}_ci.set_initial_value(0);\n", name);
  } else {
    const std::string value = ir::IsInteger(dtype) ? fmt::format("{}", static_cast<int64_t>(*init))
                                                   : ir::FloatLiteral(*init);
    body_ += fmt::format("    {}_ci.set_initial_value(static_cast<{}>({}));\n", name, *CppScalarType(dtype), value);
  }
}

// Every pl.create_tensor of the body becomes plan intermediates, which the C++ allocates all with one
// alloc_tensors at scope entry, before the first task. A create a loop runs again makes a new tensor
// each time, as upstream's allocation per iteration does, but from a pool that a long loop does not
// grow: one buffer per loop-carried tensor that may still name an earlier one (TensorCreate::carried)
// and one more, from which each run takes the first no carried tensor names (EmitPooledCreate). The
// runtime orders a task writing a reused buffer after the tasks still reading it (write-after-read),
// and tasks of different buffers never wait for each other. With nothing carried the pool is one
// buffer, reused the same way by every iteration.
ir::Result<bool> OrchestrationEmitter::AllocateIntermediates(const std::vector<ir::StmtPtr>& body) {
  std::vector<TensorCreate> creates;
  std::vector<const ir::Var*> carried;
  CollectTensorCreates(body, /*repeats=*/false, carried, creates);
  std::vector<std::string> infos;
  std::string refs;
  for (const auto& create : creates) {
    const auto& stmt = create.stmt;
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
    if (ir::HasDynamicExtent(tensor->shape())) {
      if (auto ok = AddRunTimeShaped(create, *tensor, std::move(plan_tensor)); !ok) return ok;
      continue;
    }
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
    SetInitialValue(*stmt->As<ir::AssignStmt>(), name, plan_tensor);
    // A create with init_value that runs again: the plan fills the buffer it takes at each run, and the
    // C++ allocates a new, pre-filled one there, as upstream does (EmitRefill).
    const bool refilled = create.repeated && plan_tensor.initial_bits;
    if (refilled) refills_[stmt.get()] = *std::exchange(plan_tensor.initial_bits, std::nullopt);
    const auto first = static_cast<uint32_t>(result_.plan.intermediates.size());
    const size_t buffers = create.carried.size() + 1;
    std::vector<std::string> pool_refs;
    for (size_t b = 0; b < buffers; ++b) {
      result_.plan.intermediates.push_back(plan_tensor);
      if (refilled) continue;
      pool_refs.push_back(fmt::format("&alloc_0.get_ref({})", infos.size()));
      infos.push_back(name + "_ci");
    }
    if (buffers == 1) {
      if (!refilled) refs += fmt::format("    const ChipTensor& {} = alloc_0.get_ref({});\n", name, infos.size() - 1);
      bindings_[var.get()] = Binding{rt::PlanTensorRef{rt::PlanTensorRef::Kind::Intermediate, first}, name};
      continue;
    }
    Pool pool{.cpp_name = names_.Take(name + "_pool"), .carried = create.carried};
    for (size_t b = 0; b < buffers; ++b) pool.buffers.push_back(first + static_cast<uint32_t>(b));
    if (!refilled)
      refs += fmt::format("    const ChipTensor* {}[{}] = {{{}}};\n", pool.cpp_name, buffers,
                          fmt::join(pool_refs, ", "));
    // The variable is a template view each run points at the buffer it takes.
    rt::PlanView slot{.name = var->name_hint(), .base = {rt::PlanTensorRef::Kind::Intermediate, first}};
    ViewShape(*var, slot);
    pool.slot = static_cast<uint32_t>(result_.plan.views.size());
    result_.plan.views.push_back(std::move(slot));
    template_views_.insert(pool.slot);
    bindings_[var.get()] = Binding{rt::PlanTensorRef{rt::PlanTensorRef::Kind::View, pool.slot}, name};
    pools_[stmt.get()] = std::move(pool);
  }
  if (infos.empty()) return true;
  body_ += fmt::format("    TaskOutputTensors alloc_0 = alloc_tensors({});\n", fmt::join(infos, ", ")) + refs + "\n";
  return true;
}

// A create whose shape is computed from the extents of a program compiled for every extent: one plan
// intermediate with UINT32_MAX on those axes, which each run's expansion sets (ShapeStep). One a loop
// runs again is a template view of the intermediate, which each iteration points at the rows its shape
// computes (ShapeStep::slot); that needs the other axes static, so that those rows are the whole of a
// contiguous tensor, and no loop-carried tensor that may still name the buffer of an earlier iteration.
// Anything else is refused (the program is then compiled per extent).
ir::Result<bool> OrchestrationEmitter::AddRunTimeShaped(const TensorCreate& create, const ir::TensorType& tensor,
                                                        rt::PlanTensor plan_tensor) {
  const auto* assign = create.stmt->As<ir::AssignStmt>();
  const std::string& name = assign->var()->name_hint();
  if (create.repeated) {
    const bool only_first = std::ranges::none_of(tensor.shape() | std::views::drop(1),
                                                 [](int64_t dim) { return dim == ir::kDynamicExtent; });
    if (!only_first)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("'{}' is created in a loop with an axis after the first computed when the "
                                   "program runs; such a tensor needs static extents after its first axis",
                                   name),
                       create.stmt->span());
    if (!create.carried.empty())
      return MakeError(DiagnosticKind::Type,
                       fmt::format("'{}' has a shape computed when the program runs, and is created in a loop "
                                   "that carries '{}', which may still name its earlier tensor; such a tensor "
                                   "needs a static shape",
                                   name, create.carried.front()->name_hint()),
                       create.stmt->span());
  }
  for (int64_t dim : tensor.shape())
    plan_tensor.shape.push_back(dim == ir::kDynamicExtent ? std::numeric_limits<uint32_t>::max()
                                                          : static_cast<uint32_t>(dim));
  const auto index = static_cast<uint32_t>(result_.plan.intermediates.size());
  result_.plan.intermediates.push_back(std::move(plan_tensor));
  RunTimeShaped shaped{.intermediate = index};
  rt::PlanTensorRef ref{rt::PlanTensorRef::Kind::Intermediate, index};
  if (create.repeated) {
    rt::PlanView slot{.name = name, .base = ref};
    ViewShape(*assign->var(), slot);
    shaped.slot = static_cast<uint32_t>(result_.plan.views.size());
    result_.plan.views.push_back(std::move(slot));
    template_views_.insert(*shaped.slot);
    ref = rt::PlanTensorRef{rt::PlanTensorRef::Kind::View, *shaped.slot};
  }
  run_time_shaped_[create.stmt.get()] = shaped;
  bindings_[assign->var().get()] = Binding{ref, names_.Take(name)};
  return true;
}

// Where a tensor shaped at run time is created: the C++ computes its shape and allocates it there (in a
// loop, a new tensor at each run, as upstream's), and the plan's expansion sets the intermediate's
// shape, or this iteration's view of it (ShapeStep).
ir::Result<bool> OrchestrationEmitter::EmitRunTimeShapedCreate(const ir::AssignStmt& create,
                                                               const RunTimeShaped& shaped) {
  const Binding& binding = bindings_.at(create.var().get());
  ShapeStep step{.intermediate = shaped.intermediate, .slot = shaped.slot, .span = create.span()};
  std::vector<std::string> dims;
  for (const auto& dim : create.value()->As<ir::Call>()->args()[0]->As<ir::TupleLiteral>()->elements()) {
    const bool constant = ir::AsConstInt(dim).has_value();
    if (const ir::Var* unknown = constant ? nullptr : UnknownScalar(dim))
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("the shape of '{}' is computed from '{}', which is only known when the kernels run",
                                   create.var()->name_hint(), unknown->name_hint()),
                       create.span());
    auto text = CppExpr(dim);
    if (!text) return pypto::unexpected(text.error());
    dims.push_back(constant ? *text : fmt::format("static_cast<uint32_t>({})", *text));
    step.dims.push_back(constant ? nullptr : dim);
  }
  rt::PlanTensor& tensor = result_.plan.intermediates[shaped.intermediate];
  Separate();
  body_ += fmt::format("{0}uint32_t {1}_ci_shapes[{2}] = {{{3}}};\n{0}TensorCreateInfo {1}_ci({1}_ci_shapes, {2}, "
                       "DataType::{4});\n",
                       indent_, binding.cpp_name, dims.size(), fmt::join(dims, ", "), rt::DtypeName(tensor.dtype));
  SetInitialValue(create, binding.cpp_name, tensor);  // the runtime fills it when it allocates it
  body_ += fmt::format("{}{} = alloc_tensors({}_ci).get_ref(0);\n", indent_,
                       shaped.slot ? Declared("ChipTensor", binding.cpp_name) : "const ChipTensor " + binding.cpp_name,
                       binding.cpp_name);
  const bool refilled = shaped.slot && tensor.initial_bits;
  const uint64_t bits = refilled ? *tensor.initial_bits : 0;
  steps_->push_back(Step{std::move(step)});
  // In a loop the buffer is filled once, at allocation; each later iteration's rows start at the
  // init_value again through a fill task, ordered after the tasks still reading the earlier rows.
  if (refilled) {
    rt::PlanSubmit task{.dummy = true, .fill = bits};
    task.args.push_back(rt::PlanTaskArg{.direction = rt::ArgDirection::Output, .tensor = binding.ref});
    steps_->push_back(Step{SubmitStep{.submit = std::move(task)}});
  }
  return true;
}

// A run-time shaped create in a loop grows its buffer as the plan is expanded, which a run can do only
// until it allocates its tensors: at the first element read of a tensor that tasks write, the tasks
// so far run (a staged run). So such a create and such a read in one program are refused (the
// program is then compiled per extent); a read of an input parameter, which no task writes, is not.
ir::Result<bool> OrchestrationEmitter::CheckLoopShapesBeforeReads(const ir::Function& entry) const {
  const ir::Stmt* looped = nullptr;  // the first in the source, so that the message names one
  for (const auto& [stmt, shaped] : run_time_shaped_)
    if (shaped.slot && (!looped || stmt->span().line < looped->span().line)) looped = stmt;
  if (!looped) return true;
  for (const auto& [ref, read] : element_reads_) {
    rt::PlanTensorRef base = ref;
    while (base.kind == rt::PlanTensorRef::Kind::View) base = result_.plan.views[base.index].base;
    if (base.kind == rt::PlanTensorRef::Kind::Param && base.index < entry.param_directions().size() &&
        entry.param_directions()[base.index] == ir::ParamDirection::In)
      continue;
    const auto* create = looped->As<ir::AssignStmt>();
    return MakeError(DiagnosticKind::Type,
                     fmt::format("'{}' has a shape computed when the program runs and is created in a loop, and "
                                 "orchestration code reads an element of '{}' ({}), which tasks write; the run "
                                 "allocates its tensors at that read, so such a tensor needs a static shape",
                                 create->var()->name_hint(), ir::PrintExpr(read->args()[0]), read->span().str()),
                     create->span());
  }
  return true;
}

// A run of a pl.create_tensor: nothing for one allocated at scope entry; a buffer of its pool for one
// that a loop runs again, and a refill for one that starts at init_value.
ir::Result<bool> OrchestrationEmitter::EmitCreate(const ir::AssignStmt& create) {
  if (auto shaped = run_time_shaped_.find(&create); shaped != run_time_shaped_.end())
    return EmitRunTimeShapedCreate(create, shaped->second);
  auto pool = pools_.find(&create);
  auto refill = refills_.find(&create);
  if (pool != pools_.end())
    if (auto ok = EmitPooledCreate(create, pool->second, /*select_in_cpp=*/refill == refills_.end()); !ok) return ok;
  if (refill != refills_.end()) EmitRefill(create, refill->second);
  return true;
}

// A run of a pl.create_tensor(..., init_value=v) that a loop runs again: a fill task sets v in the
// buffer the plan gives it, once the tasks of earlier iterations still using that buffer have finished
// (it writes the buffer, so the runtime orders it after them, and the tasks of this run after it). The
// C++ allocates a new buffer at each run instead, pre-filled as upstream's alloc_tensors does.
void OrchestrationEmitter::EmitRefill(const ir::AssignStmt& create, uint64_t bits) {
  const Binding& binding = bindings_.at(create.var().get());
  Separate();
  body_ += fmt::format("{}// '{}' starts at its init_value in each iteration: a new buffer each time\n", indent_,
                       create.var()->name_hint());
  body_ += fmt::format("{}{} = alloc_tensors({}_ci).get_ref(0);\n", indent_,
                       Declared("ChipTensor", binding.cpp_name), binding.cpp_name);
  rt::PlanSubmit fill{.dummy = true, .fill = bits};
  fill.args.push_back(rt::PlanTaskArg{.direction = rt::ArgDirection::Output, .tensor = binding.ref});
  steps_->push_back(Step{SubmitStep{.submit = std::move(fill)}});
}

// A run of a pl.create_tensor with a pool of buffers: the plan expansion takes the first buffer of the
// pool that no loop-carried tensor in scope names (CreateStep), and so does the C++ (comparing
// allocations: a view shares its tensor's) unless it allocates the tensor there (EmitRefill).
ir::Result<bool> OrchestrationEmitter::EmitPooledCreate(const ir::AssignStmt& create, const Pool& pool,
                                                        bool select_in_cpp) {
  const auto& var = create.var();
  const Binding& binding = bindings_.at(var.get());
  CreateStep step{.slot = pool.slot, .pool = pool.buffers};
  const std::string index = names_.Take(binding.cpp_name + "_k");
  std::vector<std::string> named;
  for (const ir::Var* carried : pool.carried) {
    auto it = bindings_.find(carried);
    if (it == bindings_.end() || it->second.ref.kind != rt::PlanTensorRef::Kind::View)
      return MakeError(DiagnosticKind::Internal,
                       fmt::format("the loop-carried tensor '{}' is not in scope at '{}'", carried->name_hint(),
                                   var->name_hint()),
                       create.span());
    step.carried.push_back(it->second.ref.index);
    if (select_in_cpp)
      named.push_back(fmt::format("{}[{}]->buffer_addr == {}.buffer_addr", pool.cpp_name, index, it->second.cpp_name));
  }
  steps_->push_back(Step{std::move(step)});
  if (!select_in_cpp) return true;
  Separate();
  body_ += fmt::format("{}// '{}' is a new tensor in each iteration: a buffer of its pool no carried tensor names\n",
                       indent_, var->name_hint());
  body_ += fmt::format("{}size_t {} = 0;\n", indent_, index);
  body_ += fmt::format("{}while ({}) ++{};\n", indent_, fmt::join(named, " || "), index);
  body_ += fmt::format("{}{} = *{}[{}];\n", indent_, Declared("ChipTensor", binding.cpp_name), pool.cpp_name, index);
  return true;
}

}  // namespace pypto::codegen_orch::detail
