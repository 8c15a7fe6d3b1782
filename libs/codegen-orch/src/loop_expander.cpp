// LoopExpander: the expansion of each kind of plan step (submits, TaskIds, views, rebinds, loops,
// ifs, runtime scopes) and the limits on how large an expanded plan may grow.
#include "loop_expander.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>

namespace pypto::codegen_orch::detail {

using ir::DiagnosticKind;
using ir::MakeError;

// The plan holds every task of one run, so loops expand into at most this many submits.
constexpr size_t kMaxPlanSubmits = 1'000'000;
// Iterations that submit nothing (an inner loop with no trips) still take time to expand.
constexpr uint64_t kMaxLoopIterations = 16 * kMaxPlanSubmits;
// An SPMD launch of N blocks is N tasks of the run, each with its own record in the runtime.
constexpr uint64_t kMaxPlanTasks = 4 * kMaxPlanSubmits;

ir::Result<bool> LoopExpander::Run(const std::vector<Step>& steps) {
  for (const auto& step : steps) {
    ir::Result<bool> ok = true;
    if (const auto* submit = std::get_if<SubmitStep>(&step.node)) ok = Submit(*submit);
    else if (const auto* scalar = std::get_if<ScalarStep>(&step.node)) ok = Define(*scalar);
    else if (const auto* task_id = std::get_if<TaskIdStep>(&step.node)) ok = DefineTaskId(*task_id);
    else if (const auto* scope = std::get_if<ScopeStep>(&step.node)) ok = Scope(scope->body, scope->manual);
    else if (const auto* branch = std::get_if<IfStep>(&step.node)) ok = If(*branch);
    else if (const auto* carry = std::get_if<CarryStep>(&step.node)) ok = Carry(*carry);
    else if (const auto* view = std::get_if<ViewStep>(&step.node)) ok = View(*view);
    else if (const auto* rebind = std::get_if<RebindStep>(&step.node)) ok = Rebind(*rebind);
    else if (const auto* create = std::get_if<CreateStep>(&step.node)) ok = Create(*create);
    else if (const auto* shape = std::get_if<ShapeStep>(&step.node)) ok = Shape(*shape);
    else ok = Loop(std::get<LoopStep>(step.node));
    if (!ok) return ok;
  }
  return true;
}

ir::Result<bool> LoopExpander::Submit(const SubmitStep& step) {
  if (submits_.size() >= kMaxPlanSubmits)
    return TooLarge(fmt::format("submits more than {} tasks", kMaxPlanSubmits));
  rt::PlanSubmit submit = step.submit;
  for (auto& arg : submit.args)
    if (arg.direction != rt::ArgDirection::Scalar) arg.tensor = Current(arg.tensor);
  if (auto ok = CheckRebindHazard(step, submit); !ok) return ok;
  if (step.computed_blocks) {
    auto blocks = BlockCount(*step.computed_blocks);
    if (!blocks) return pypto::unexpected(blocks.error());
    if (*blocks == 0) {  // launches nothing: no task, and a TaskId naming it is invalid
      if (step.task_id) task_ids_[step.task_id] = TaskIds(1);
      return true;
    }
    submit.block_num = *blocks;
  }
  if (auto ok = CountTasks(step, submit.block_num); !ok) return ok;
  for (const auto& scalar : step.scalars) {
    uint64_t bits = 0;
    if (scalar.bits) {
      bits = *scalar.bits;
    } else {
      auto value = Eval(scalar.expr);
      if (!value) return pypto::unexpected(value.error());
      auto encoded = Encode(*value, scalar, *scalar.expr);
      if (!encoded) return pypto::unexpected(encoded.error());
      bits = *encoded;
    }
    submit.args.push_back(rt::PlanTaskArg{.direction = rt::ArgDirection::Scalar, .scalar = bits});
  }
  for (const ir::Var* dep : step.deps) {  // a TaskId, or every element of a TaskId array
    auto ids = TaskIdOf(dep);
    if (!ids) return pypto::unexpected(ids.error());
    for (const auto& id : **ids)
      if (id) submit.deps.push_back(*id);
  }
  for (const auto& arg : submit.args) {
    if (arg.direction == rt::ArgDirection::Input || arg.direction == rt::ArgDirection::Scalar) continue;
    const rt::PlanTensorRef buffer = BufferOf(arg.tensor);
    pending_writes_.emplace(buffer.kind, buffer.index);
    if (buffer.kind == rt::PlanTensorRef::Kind::Intermediate) written_intermediates_.insert(buffer.index);
  }
  submit.scopes_opened = unopened_scopes_;
  submit.opens_manual_scope = unopened_scopes_ > 0 && unopened_manual_;
  unopened_scopes_ = 0;
  unopened_manual_ = false;
  if (step.task_id) task_ids_[step.task_id] = {static_cast<uint32_t>(submits_.size())};
  submits_.push_back(std::move(submit));
  return true;
}

// A tensor a loop carries by rebinding names, in each iteration, the buffer of the tensor it was
// rebound to. A task reading it and writing another tensor that is the same buffer in this iteration
// (`cur` alternating between two tensors created before the loop while a kernel always writes one
// of them) would read and write one buffer through two parameters: refused, as its results would
// depend on the order the kernel touches the elements in. (A tensor created in the loop body is a
// buffer no carried tensor names: see AllocateIntermediates.)
ir::Result<bool> LoopExpander::CheckRebindHazard(const SubmitStep& step, const rt::PlanSubmit& submit) const {
  const auto& args = submit.args;
  for (size_t r = 0; r < args.size(); ++r) {
    if (args[r].direction != rt::ArgDirection::Input) continue;
    for (size_t w = 0; w < args.size(); ++w) {
      const auto direction = args[w].direction;
      if (direction == rt::ArgDirection::Input || direction == rt::ArgDirection::Scalar) continue;
      const auto& read = step.submit.args[r].tensor;
      const auto& written = step.submit.args[w].tensor;
      if (read == written || args[r].tensor != args[w].tensor) continue;
      const std::string kernel = step.call ? step.call->callee() : "the kernel";
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("'{}' would read '{}' and write '{}', which name one buffer here{}: the loop "
                                   "rebinds '{}' to the tensor the task writes, so the task would overwrite what "
                                   "it reads",
                                   kernel, NameOf(read), NameOf(written), Where(), NameOf(read)),
                       step.call ? step.call->span() : ir::Span{},
                       "write into a tensor created in the loop body (a new one in each iteration), or let the "
                       "kernel update the carried tensor in place (pl.InOut)");
    }
  }
  return true;
}

std::string LoopExpander::NameOf(rt::PlanTensorRef ref) const {
  if (ref.kind == rt::PlanTensorRef::Kind::View) return ref.index < views_.size() ? views_[ref.index].name : "?";
  const auto& list = ref.kind == rt::PlanTensorRef::Kind::Param ? plan_.params : plan_.intermediates;
  return ref.index < list.size() ? list[ref.index].name : "?";
}

// The blocks of a pl.spmd launch in this iteration: 0 (nothing to launch) up to what LaunchSpec holds.
ir::Result<int32_t> LoopExpander::BlockCount(const ir::Call& launch) const {
  auto value = Eval(launch.core_num());
  if (!value) return pypto::unexpected(value.error());
  if (value->i < 0 || value->i > std::numeric_limits<int32_t>::max())
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("the pl.spmd launch of '{}' has {} blocks{}; a block count must be {}",
                                 launch.callee(), value->i, Where(), value->i < 0 ? "at least 0" : "below 2^31"),
                     launch.span());
  return static_cast<int32_t>(value->i);
}

// The submits a TaskId variable (one) or TaskId array (one per element) names in this iteration.
ir::Result<const LoopExpander::TaskIds*> LoopExpander::TaskIdOf(const ir::Var* var) const {
  auto it = task_ids_.find(var);
  if (it == task_ids_.end())
    return MakeError(DiagnosticKind::Internal,
                     fmt::format("TaskId '{}' has no value in the loop expansion", var->name_hint()), var->span());
  return &it->second;
}

ir::Result<bool> LoopExpander::DefineTaskId(const TaskIdStep& step) {
  using Kind = TaskIdStep::Kind;
  if (step.kind == Kind::Create) {
    task_ids_[step.var] = TaskIds(static_cast<size_t>(step.extent));
    return true;
  }
  if (step.kind == Kind::Copy && !step.from) {
    task_ids_[step.var] = TaskIds(1);
    return true;
  }
  auto from = TaskIdOf(step.from);
  if (!from) return pypto::unexpected(from.error());
  if (step.kind == Kind::Copy) {
    TaskIds copy = **from;  // `from` may be step.var's own entry
    task_ids_[step.var] = std::move(copy);
    return true;
  }
  auto index = ElementIndex(step, (*from)->size());
  if (!index) return pypto::unexpected(index.error());
  if (step.kind == Kind::Get) {
    task_ids_[step.var] = TaskIds{(**from)[*index]};
    return true;
  }
  auto value = TaskIdOf(step.value);
  if (!value) return pypto::unexpected(value.error());
  TaskIds updated = **from;
  updated[*index] = (*value)->front();
  task_ids_[step.var] = std::move(updated);
  return true;
}

// The element an array step reads or writes in this iteration, checked against the array's extent.
ir::Result<size_t> LoopExpander::ElementIndex(const TaskIdStep& step, size_t extent) const {
  auto index = Eval(step.index);
  if (!index) return pypto::unexpected(index.error());
  if (index->i < 0 || static_cast<uint64_t>(index->i) >= extent)
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("index {} is out of range for TaskId array '{}' of {} elements{}", index->i,
                                 step.from->name_hint(), extent, Where()),
                     step.index->span());
  return static_cast<size_t>(index->i);
}

ir::Result<bool> LoopExpander::Define(const ScalarStep& step) {
  auto value = Eval(step.value);
  if (!value) return pypto::unexpected(value.error());
  values_[step.var] = Narrow(*value, step.dtype);
  return true;
}

// A template view's view in this iteration (the last expansion of its ViewStep); any other as is.
rt::PlanTensorRef LoopExpander::Current(rt::PlanTensorRef ref) const {
  if (ref.kind != rt::PlanTensorRef::Kind::View) return ref;
  auto it = current_views_.find(ref.index);
  return it == current_views_.end() ? ref : it->second;
}

ir::Result<bool> LoopExpander::Rebind(const RebindStep& step) {
  std::vector<rt::PlanTensorRef> next;
  for (const auto& rebinding : step.rebindings) next.push_back(Current(rebinding.value));
  for (size_t i = 0; i < next.size(); ++i) current_views_[step.rebindings[i].slot] = next[i];
  return true;
}

// The tensor a template view names in this iteration, followed through views to the parameter or
// intermediate it is part of.
rt::PlanTensorRef LoopExpander::BufferOf(rt::PlanTensorRef ref) const {
  for (ref = Current(ref); ref.kind == rt::PlanTensorRef::Kind::View; ref = Current(views_[ref.index].base)) {
  }
  return ref;
}

// The run-time extents of a created tensor, this run's: each positive, below UINT32_MAX. Set before any
// task of the run is submitted to the runtime, which allocates the intermediates at their shapes. One
// a loop runs again (step.slot) takes a view of the intermediate's first rows in each iteration, the
// intermediate growing to the most rows any iteration takes.
ir::Result<bool> LoopExpander::Shape(const ShapeStep& step) {
  if (!shaped_ || step.intermediate >= shaped_->size())
    return MakeError(DiagnosticKind::Internal, "a tensor shaped at run time is expanded outside a run", step.span);
  rt::PlanTensor& tensor = (*shaped_)[step.intermediate];
  constexpr uint32_t kUnset = std::numeric_limits<uint32_t>::max();
  std::vector<uint32_t> shape = tensor.shape;
  if (auto ok = EvalDims(step.dims, shape, fmt::format("'{}'", tensor.name), step.span); !ok) return ok;
  std::vector<uint32_t> buffer = shape;
  if (step.slot && tensor.shape[0] != kUnset) buffer[0] = std::max(buffer[0], tensor.shape[0]);
  if (buffer != tensor.shape && allocated_)
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("'{}' takes its shape here{}, after orchestration code read a tensor that earlier tasks "
                                 "write, when the run has allocated its tensors; create it before that read, or "
                                 "with a static shape",
                                 tensor.name, Where()),
                     step.span);
  tensor.shape = std::move(buffer);
  if (!step.slot) return true;
  rt::PlanView view = views_[*step.slot];
  view.base = {rt::PlanTensorRef::Kind::Intermediate, step.intermediate};
  view.shape = std::move(shape);
  view.offsets.assign(view.shape.size(), 0);
  current_views_[*step.slot] = {rt::PlanTensorRef::Kind::View, static_cast<uint32_t>(views_.size())};
  views_.push_back(std::move(view));
  return true;
}

ir::Result<bool> LoopExpander::Create(const CreateStep& step) {
  for (uint32_t buffer : step.pool) {
    const rt::PlanTensorRef candidate{rt::PlanTensorRef::Kind::Intermediate, buffer};
    const bool named = std::ranges::any_of(step.carried, [&](uint32_t slot) {
      return BufferOf({rt::PlanTensorRef::Kind::View, slot}) == candidate;
    });
    if (named) continue;
    current_views_[step.slot] = candidate;
    return true;
  }
  return MakeError(DiagnosticKind::Internal,
                   fmt::format("every buffer of '{}' is named by a loop-carried tensor{}", views_[step.slot].name,
                               Where()));
}

ir::Result<bool> LoopExpander::View(const ViewStep& step) {
  rt::PlanView view = views_[step.view];
  view.base = Current(view.base);
  if (step.reshape) {
    if (auto ok = Reshape(step, view); !ok) return ok;
    views_[step.view].shape = view.shape;  // the template too: the runtime builds every view of the plan
  }
  for (size_t d = 0; d < step.offsets.size(); ++d) {
    auto value = Eval(step.offsets[d]);
    if (!value) return pypto::unexpected(value.error());
    const uint32_t extent = ExtentOf(view.base, d);
    if (value->i < 0 || !rt::WindowFits(static_cast<uint32_t>(d), static_cast<uint64_t>(value->i), view.shape[d],
                                        extent))
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("the slice '{}' at offset {} of size {} is outside its tensor's extent {} in "
                                   "dimension {}{}",
                                   view.name, value->i, view.shape[d], extent, d, Where()),
                       step.span);
    view.offsets[d] = static_cast<uint32_t>(value->i);
  }
  current_views_[step.view] = {rt::PlanTensorRef::Kind::View, static_cast<uint32_t>(views_.size())};
  views_.push_back(std::move(view));
  return true;
}

// A reshape of a tensor with a run-time extent: the new shape's computed dimensions take this
// iteration's values, and the tensor it views must hold as many elements now. An inline helper's
// fixed annotation of an axis its caller has at run time is such a reshape (parse_inline_calls.cpp),
// hence the message in terms of both shapes.
ir::Result<bool> LoopExpander::Reshape(const ViewStep& step, rt::PlanView& view) const {
  constexpr uint32_t kUnset = std::numeric_limits<uint32_t>::max();
  if (auto ok = EvalDims(step.dims, view.shape, fmt::format("the reshape '{}'", view.name), step.span); !ok) return ok;
  const std::vector<uint32_t> from = RunShapeOf(view.base);
  if (from.empty() || std::ranges::find(from, kUnset) != from.end()) return true;  // the runtime's reshape checks it
  const auto count = [](const std::vector<uint32_t>& shape) {
    uint64_t elements = 1;
    for (uint32_t extent : shape) elements *= extent;
    return elements;
  };
  if (count(from) == count(view.shape)) return true;
  return MakeError(DiagnosticKind::InvalidOperation,
                   fmt::format("'{}' is taken as [{}] here, but the tensor it views is [{}] when the program runs{}",
                               view.name, fmt::join(view.shape, ", "), fmt::join(from, ", "), Where()),
                   step.span, "pass a tensor of the shape written here, or write the axis as a pl.dynamic dimension");
}

// Sets each dimension of `shape` that `dims` computes (a null entry keeps its static extent) to this
// iteration's value, each positive and below UINT32_MAX; `what` names the tensor in the error.
ir::Result<bool> LoopExpander::EvalDims(const std::vector<ir::ExprPtr>& dims, std::vector<uint32_t>& shape,
                                        const std::string& what, const ir::Span& span) const {
  for (size_t d = 0; d < dims.size() && d < shape.size(); ++d) {
    if (!dims[d]) continue;
    auto value = Eval(dims[d]);
    if (!value) return pypto::unexpected(value.error());
    if (value->i <= 0 || value->i >= std::numeric_limits<uint32_t>::max())
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("dimension {} of {} is {}{}; a tensor's dimensions must be positive", d, what,
                                   value->i, Where()),
                       span);
    shape[d] = static_cast<uint32_t>(value->i);
  }
  return true;
}

// The shape of a plan tensor in this run: a parameter's is the caller's tensor's, an intermediate's
// and a view's what the expansion has set so far (empty where the run gives none).
std::vector<uint32_t> LoopExpander::RunShapeOf(rt::PlanTensorRef ref) const {
  ref = Current(ref);
  if (ref.kind == rt::PlanTensorRef::Kind::View) return views_[ref.index].shape;
  if (ref.kind == rt::PlanTensorRef::Kind::Intermediate) {
    const auto& list = shaped_ ? *shaped_ : plan_.intermediates;
    return ref.index < list.size() ? list[ref.index].shape : std::vector<uint32_t>{};
  }
  if (!reads_ || !reads_->source) return {};
  auto tensor = reads_->source->Buffer(ref, "", {});
  if (!tensor) return {};
  return {tensor->shapes, tensor->shapes + tensor->ndims};
}

// The extent of dimension `d` of a tensor operand.
uint32_t LoopExpander::ExtentOf(rt::PlanTensorRef ref, size_t d) const {
  if (ref.kind == rt::PlanTensorRef::Kind::View) return d < views_[ref.index].shape.size() ? views_[ref.index].shape[d] : 0;
  const auto& list = ref.kind == rt::PlanTensorRef::Kind::Param ? plan_.params : plan_.intermediates;
  return ref.index < list.size() && d < list[ref.index].shape.size() ? list[ref.index].shape[d] : 0;
}

ir::Result<bool> LoopExpander::Carry(const CarryStep& step) {
  std::vector<Value> next;
  for (const auto& update : step.updates) {
    auto value = Eval(update.value);
    if (!value) return pypto::unexpected(value.error());
    next.push_back(Narrow(*value, update.dtype));
  }
  for (size_t i = 0; i < next.size(); ++i) values_[step.updates[i].var] = next[i];
  return true;
}

ir::Result<bool> LoopExpander::If(const IfStep& step) {
  auto condition = Eval(step.stmt->condition());
  if (!condition) return pypto::unexpected(condition.error());
  const bool taken = condition->is_float ? condition->f != 0 : condition->i != 0;
  return Run(taken ? step.then_body : step.else_body);
}

ir::Result<bool> LoopExpander::Loop(const LoopStep& step) {
  if (!step.submits && !step.carries_values_out) return true;
  const ir::ForStmt& loop = *step.loop;
  int64_t bounds[3];
  const ir::ExprPtr* exprs[3] = {&loop.start(), &loop.stop(), &loop.step()};
  for (int b = 0; b < 3; ++b) {
    auto value = Eval(*exprs[b]);
    if (!value) return pypto::unexpected(value.error());
    bounds[b] = value->i;
  }
  const auto [start, stop, stride] = bounds;
  if (stride == 0)
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("the step of orchestration loop '{}' is zero{}", loop.loop_var()->name_hint(),
                                 Where()),
                     loop.span());
  enclosing_.push_back({&loop, 0});
  // Refuse a plan that is certain to be too large before building it.
  const __int128 trips = stride > 0 ? (start < stop ? (__int128{stop} - start + stride - 1) / stride : 0)
                                    : (start > stop ? (__int128{start} - stop - stride - 1) / -__int128{stride} : 0);
  if (submits_.size() + trips * MinSubmits(step.body) > kMaxPlanSubmits)
    return TooLarge(fmt::format("submits more than {} tasks", kMaxPlanSubmits));
  // 128-bit, so that the last step past the bound cannot overflow.
  for (__int128 i = start; stride > 0 ? i < stop : i > stop; i += stride) {
    if (++iterations_ > kMaxLoopIterations)
      return TooLarge(fmt::format("runs more than {} loop iterations", kMaxLoopIterations));
    values_[loop.loop_var().get()] = Value{.i = static_cast<int64_t>(i)};
    enclosing_.back().second = static_cast<int64_t>(i);
    if (auto ok = step.scoped ? Scope(step.body, false) : Run(step.body); !ok) return ok;
  }
  enclosing_.pop_back();
  return true;
}

// A runtime scope (one iteration of a loop body, or a pl.manual_scope / pl.scope): opened before its
// first submit, closed after its last; one that submits nothing opens none.
ir::Result<bool> LoopExpander::Scope(const std::vector<Step>& body, bool manual) {
  const size_t before = submits_.size();
  ++unopened_scopes_;
  unopened_manual_ = manual;  // nothing nests in a manual scope, so it is the innermost one opened
  auto ok = Run(body);
  if (submits_.size() > before) {
    ++submits_.back().scopes_closed;
  } else {
    --unopened_scopes_;
    unopened_manual_ = false;
  }
  return ok;
}

// A lower bound on the submits one run of `steps` makes: its own (but for launches whose block count
// may come to 0), and those of inner loops whose bounds are literals (others may depend on values not
// known yet). Saturates at the plan limit.
__int128 LoopExpander::MinSubmits(const std::vector<Step>& steps) {
  __int128 count = 0;
  for (const auto& step : steps) {
    if (const auto* submit = std::get_if<SubmitStep>(&step.node); submit && !submit->computed_blocks) ++count;
    const auto* inner = std::get_if<LoopStep>(&step.node);
    if (!inner || !inner->submits) continue;
    auto start = ir::AsConstInt(inner->loop->start()), stop = ir::AsConstInt(inner->loop->stop()),
         stride = ir::AsConstInt(inner->loop->step());
    if (!start || !stop || !stride || *stride <= 0 || *start >= *stop) continue;
    count += (__int128{*stop} - *start + *stride - 1) / *stride * MinSubmits(inner->body);
    if (count > kMaxPlanSubmits) return kMaxPlanSubmits + 1;
  }
  return count;
}

// Adds a submit's blocks to the run's tasks, refusing a launch or a run past kMaxPlanTasks.
ir::Result<bool> LoopExpander::CountTasks(const SubmitStep& step, int32_t blocks) {
  tasks_ += static_cast<uint64_t>(std::max(blocks, 1));
  if (tasks_ <= kMaxPlanTasks) return true;
  if (static_cast<uint64_t>(blocks) > kMaxPlanTasks && step.call)
    return MakeError(DiagnosticKind::Resource,
                     fmt::format("the pl.spmd launch of '{}' has {} blocks{}, more than the {} tasks a run may hold "
                                 "(each block is a task)",
                                 step.call->callee(), blocks, Where(), kMaxPlanTasks),
                     step.call->span(), "give each block more work: fewer, larger blocks");
  return TooLarge(fmt::format("runs more than {} tasks (an SPMD launch of N blocks is N tasks)", kMaxPlanTasks));
}

// Refuses a plan past the limits, naming the outermost loop, the one to restructure.
pypto::unexpected<ir::Diagnostic> LoopExpander::TooLarge(const std::string& what) const {
  if (enclosing_.empty())
    return MakeError(DiagnosticKind::Resource, fmt::format("the orchestration {}", what));
  const ir::ForStmt& outer = *enclosing_.front().first;
  return MakeError(DiagnosticKind::Resource,
                   fmt::format("expanding orchestration loop '{}' into the task plan {}; loops are unrolled at "
                               "compile time, so use larger tiles or fewer iterations",
                               outer.loop_var()->name_hint(), what),
                   outer.span());
}

// " (when r = 128, c = 256)": the iteration an error happened in.
std::string LoopExpander::Where() const {
  if (enclosing_.empty()) return "";
  std::vector<std::string> values;
  for (const auto& [loop, value] : enclosing_)
    values.push_back(fmt::format("{} = {}", loop->loop_var()->name_hint(), value));
  return fmt::format(" (when {})", fmt::join(values, ", "));
}

}  // namespace pypto::codegen_orch::detail
