// OrchestrationEmitter: views of tensors in orchestration code (pl.reshape, pl.transpose,
// pl.slice), as runtime views in the C++ and plan views, made anew in each iteration where needed.
#include "orchestration_emitter.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "pypto/ir/dynamic_extent.h"
#include "pypto/ir/op_attr.h"

namespace pypto::codegen_orch::detail {

using ir::DiagnosticKind;
using ir::MakeError;

// The tensor a reshape or slice views: a parameter, a pl.create_tensor tensor or another view.
ir::Result<const OrchestrationEmitter::Binding*> OrchestrationEmitter::ViewedTensor(const ir::AssignStmt& assign,
                                                                                    const ir::Call& call,
                                                                                    std::string_view what) const {
  const ir::Var* base = call.args()[0]->As<ir::Var>();
  // The runtime counts an FP4 tensor in bytes, two values each, and a view in values: the two would
  // disagree on every extent along the last axis.
  const auto* tensor = base ? base->type()->As<ir::TensorType>() : nullptr;
  if (tensor && tensor->dtype() == ir::DataType::FP4)
    return MakeError(DiagnosticKind::Type,
                     fmt::format("{} the FP4 tensor '{}', which orchestration code cannot view yet", what,
                                 base->name_hint()),
                     assign.span(), "pass the whole tensor to the kernel and load the window there");
  auto it = base ? bindings_.find(base) : bindings_.end();
  if (it == bindings_.end())
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("{} a parameter, a pl.create_tensor tensor or a view of one", what),
                     assign.span());
  return &it->second;
}

// Sets the view's shape to the variable's; returns it as C++ initializer text ("16, 32").
std::string OrchestrationEmitter::ViewShape(const ir::Var& var, rt::PlanView& view) {
  for (int64_t dim : var.type()->As<ir::TensorType>()->shape()) view.shape.push_back(static_cast<uint32_t>(dim));
  return fmt::format("{}", fmt::join(view.shape, ", "));
}

// The new shape of a reshape as C++ initializer text ("16, 32"). In a program compiled once for every
// extent dimensions may be computed from the dynamic axes (`[b_dim, s_dim, HEAD_DIM]`): the C++
// computes each, and the plan's view holds UINT32_MAX there, which each expansion sets (ViewStep).
ir::Result<std::string> OrchestrationEmitter::ReshapeDims(const ir::AssignStmt& assign, const ir::Call& call) {
  std::vector<std::string> dims;
  for (const auto& dim : call.args()[1]->As<ir::TupleLiteral>()->elements()) {
    if (const ir::Var* unknown = UnknownScalar(dim))
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("the shape of reshape '{}' is computed from '{}', which is only known when the "
                                   "kernels run",
                                   assign.var()->name_hint(), unknown->name_hint()),
                       assign.span());
    auto text = CppExpr(dim);
    if (!text) return pypto::unexpected(text.error());
    dims.push_back(ir::AsConstInt(dim) ? *text : fmt::format("static_cast<uint32_t>({})", *text));
  }
  return fmt::format("{}", fmt::join(dims, ", "));
}

// `y = pl.reshape(x, [..])`: a view of the whole of x under another shape, the same buffer. Its
// shape is static (but for the dimensions computed at run time), so one view serves every iteration
// of a loop around it.
ir::Result<bool> OrchestrationEmitter::EmitReshape(const ir::AssignStmt& assign, const ir::Call& call) {
  auto viewed = ViewedTensor(assign, call, "pl.reshape in orchestration code reshapes");
  if (!viewed) return pypto::unexpected(viewed.error());
  const auto& var = assign.var();
  if (auto existing = view_of_.find(&assign); existing != view_of_.end()) {  // again, in a later iteration
    bindings_[var.get()] = existing->second;
    return true;
  }
  rt::PlanView view{.name = var->name_hint(), .base = (*viewed)->ref};
  ViewShape(*var, view);
  auto dims = ReshapeDims(assign, call);
  if (!dims) return pypto::unexpected(dims.error());
  Separate();
  const std::string name = names_.Take(var->name_hint());
  body_ += fmt::format("{0}uint32_t {1}_shapes[{2}] = {{{3}}};\n{0}const ChipTensor {1} = {4}.reshape({1}_shapes, {2});\n",
                       indent_, name, view.shape.size(), *dims, (*viewed)->cpp_name);
  const Binding binding = AddView(std::move(view), name, assign.span());
  // Of a tensor with a run-time extent, or to one: a template view whose ViewStep computes every
  // run-time dimension of the new shape in each expansion (the runtime's reshape infers only one) and
  // checks the element count there, located at the reshape (for an inline helper's annotation, at it).
  if (ir::HasDynamicExtent(call.args()[0]->type()->As<ir::TensorType>()->shape()) ||
      ir::HasDynamicExtent(var->type()->As<ir::TensorType>()->shape())) {
    if (template_views_.insert(binding.ref.index).second)
      steps_->push_back(Step{ViewStep{.view = binding.ref.index, .span = assign.span()}});
    auto& step = std::get<ViewStep>(steps_->back().node);
    step.reshape = true;
    for (const auto& dim : call.args()[1]->As<ir::TupleLiteral>()->elements())
      step.dims.push_back(ir::AsConstInt(dim) ? nullptr : dim);
  }
  bindings_[var.get()] = binding;
  view_of_[&assign] = binding;
  return true;
}

// `xt = pl.transpose(x, axis1, axis2)`: x with the two axes and their strides swapped (the
// runtime's transpose()); a kernel given xt reads x through those strides.
ir::Result<bool> OrchestrationEmitter::EmitTranspose(const ir::AssignStmt& assign, const ir::Call& call) {
  auto viewed = ViewedTensor(assign, call, "pl.transpose in orchestration code transposes");
  if (!viewed) return pypto::unexpected(viewed.error());
  const auto& var = assign.var();
  const auto rank = static_cast<int64_t>(var->type()->As<ir::TensorType>()->shape().size());
  const auto axis = [&](const char* key) {
    const int64_t value = *ir::FindAttr<int64_t>(call.kwargs(), key);
    return static_cast<uint32_t>(value < 0 ? value + rank : value);
  };
  rt::PlanView view{.name = var->name_hint(), .base = (*viewed)->ref};
  ViewShape(*var, view);
  view.swapped_axes = std::pair{axis("axis1"), axis("axis2")};
  Separate();
  const std::string name = names_.Take(var->name_hint());
  body_ += fmt::format("{}const ChipTensor {} = {}.transpose({}, {});\n", indent_, name, (*viewed)->cpp_name,
                       view.swapped_axes->first, view.swapped_axes->second);
  bindings_[var.get()] = AddView(std::move(view), name, assign.span());
  return true;
}

// Appends a view defined as a whole of its base (a reshape or a transpose). Of a view that each
// iteration makes anew (a slice at computed offsets), it is made anew too, by a ViewStep.
OrchestrationEmitter::Binding OrchestrationEmitter::AddView(rt::PlanView view, const std::string& cpp_name,
                                                            const ir::Span& span) {
  const auto index = static_cast<uint32_t>(result_.plan.views.size());
  const bool of_template = view.base.kind == rt::PlanTensorRef::Kind::View && template_views_.contains(view.base.index);
  result_.plan.views.push_back(std::move(view));
  if (of_template) {
    template_views_.insert(index);
    steps_->push_back(Step{ViewStep{.view = index, .offsets = {}, .span = span}});
  }
  return Binding{rt::PlanTensorRef{rt::PlanTensorRef::Kind::View, index}, cpp_name};
}

// `v = pl.slice(t, shape, offsets)` passed to kernels: a view of the window of t (the runtime's
// view(), t's strides). At offsets computed in orchestration code, or of such a view, the plan holds
// a template and a ViewStep makes each iteration's view.
ir::Result<bool> OrchestrationEmitter::EmitSlice(const ir::AssignStmt& assign, const ir::Call& call) {
  auto viewed = ViewedTensor(assign, call, "pl.slice in orchestration code slices");
  if (!viewed) return pypto::unexpected(viewed.error());
  const auto& var = assign.var();
  const rt::PlanTensorRef base = (*viewed)->ref;
  rt::PlanView view{.name = var->name_hint(), .base = base};
  const std::string dims = ViewShape(*var, view);
  std::vector<std::string> offsets;
  std::vector<ir::ExprPtr> offset_exprs;
  bool computed = base.kind == rt::PlanTensorRef::Kind::View && template_views_.contains(base.index);
  for (const auto& offset : call.args()[2]->As<ir::TupleLiteral>()->elements()) {
    if (const ir::Var* unknown = UnknownScalar(offset))
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("the offset of slice '{}' is computed from '{}', which is only known when the "
                                   "kernels run",
                                   var->name_hint(), unknown->name_hint()),
                       assign.span());
    auto text = CppExpr(offset);
    if (!text) return pypto::unexpected(text.error());
    const auto constant = ir::AsConstInt(offset);
    computed |= !constant;
    view.offsets.push_back(constant ? static_cast<uint32_t>(*constant) : 0);
    offsets.push_back(constant ? *text : fmt::format("static_cast<uint32_t>({})", *text));
    offset_exprs.push_back(offset);
  }
  Separate();
  const std::string name = names_.Take(var->name_hint());
  body_ += fmt::format(
      "{0}uint32_t {1}_shapes[{2}] = {{{3}}};\n{0}uint32_t {1}_offsets[{2}] = {{{4}}};\n"
      "{0}const ChipTensor {1} = {5}.view({1}_shapes, {1}_offsets);\n",
      indent_, name, view.shape.size(), dims, fmt::join(offsets, ", "), (*viewed)->cpp_name);
  const auto index = static_cast<uint32_t>(result_.plan.views.size());
  result_.plan.views.push_back(std::move(view));
  if (computed) {
    template_views_.insert(index);
    steps_->push_back(Step{ViewStep{.view = index, .offsets = std::move(offset_exprs), .span = assign.span()}});
  }
  bindings_[var.get()] = Binding{rt::PlanTensorRef{rt::PlanTensorRef::Kind::View, index}, name};
  return true;
}

}  // namespace pypto::codegen_orch::detail
