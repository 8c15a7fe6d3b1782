// FunctionParser: calls of @pl.jit.inline functions, whose bodies are parsed at each call site.
#include "function_parser.h"

#include <fmt/format.h>

#include <utility>

#include "annotated_extents.h"
#include "pypto/ir/dynamic_extent.h"


namespace pypto::frontend {

using ir::DiagnosticKind;
using ir::MakeError;

namespace {

using RunTimeShapes = std::unordered_map<uint64_t, std::vector<ir::ExprPtr>>;

// The run-time extent of axis `axis` of `tensor` in a program compiled for every extent: the variable of
// the dimension that labels that axis of the parameter `tensor` is, or null (a static axis, or a tensor
// no parameter names).
ir::VarPtr UnboundAxisVar(const DynamicBindings& bindings, const std::unordered_map<std::string, ir::VarPtr>& env, const ir::Var* tensor,
                          int64_t axis, const RunTimeShapes& run_time_shapes) {
  for (const auto& [name, binding] : bindings) {
    if (!binding.var) continue;
    for (const auto& [param, param_axis] : binding.axes) {
      auto named = env.find(param);
      if (param_axis == axis && named != env.end() && named->second.get() == tensor) return binding.var;
    }
  }
  // A tensor the orchestration created with a dimension computed at run time (`pl.create_tensor([t_dim,
  // D])`): the variable it was created with.
  auto created = run_time_shapes.find(tensor->id());
  if (created == run_time_shapes.end() || axis >= static_cast<int64_t>(created->second.size())) return nullptr;
  return std::dynamic_pointer_cast<const ir::Var>(created->second[axis]);
}

// An axis the caller passes unbound keeps the caller's run-time extent in the inline function: the
// dimension its parameter's annotation writes there (bare) reads the caller's variable, whatever other
// dimensions the caller passes unbound (upstream's DynVar is one value across the functions it labels).
// A name an earlier parameter of the inline function bound stays bound.
void BindUnboundArgs(py::handle def, const std::vector<ir::ExprPtr>& args, const DynamicBindings& caller,
                     const std::unordered_map<std::string, ir::VarPtr>& env, const RunTimeShapes& run_time_shapes,
                     const SourceMap& map, const Constants* constants, DynamicBindings& inlined) {
  py::list params = def.attr("args").attr("args");
  for (size_t i = 0; i < args.size() && i < py::len(params); ++i) {
    const auto* tensor = args[i]->type()->As<ir::TensorType>();
    const auto* var = args[i]->As<ir::Var>();
    if (!tensor || !var) continue;
    const std::vector<std::string> names = BareDynamicNames(params[i].attr("annotation"), map, constants);
    const std::string param = params[i].attr("arg").cast<std::string>();
    for (size_t axis = 0; axis < names.size() && axis < tensor->shape().size(); ++axis) {
      if (names[axis].empty() || tensor->shape()[axis] != ir::kDynamicExtent) continue;
      ir::VarPtr extent = UnboundAxisVar(caller, env, var, static_cast<int64_t>(axis), run_time_shapes);
      auto known = inlined.find(names[axis]);
      if (!extent || (known != inlined.end() && !known->second.inherited)) continue;
      inlined[names[axis]] = DynamicBinding{
          .extent = ir::kDynamicExtent, .param = param, .axis = static_cast<int64_t>(axis), .var = extent};
    }
  }
}

// In a program compiled once for every extent, an inline helper's annotation and its argument may
// disagree on which axes are known when it compiles: a constant written on an axis the argument has
// only at run time (rope_interleave's `cos_half: pl.Tensor[[B, 32], ...]` given the entry's `[B_DYN,
// 32]` cos), or a dimension the caller passes unbound written on an axis of a tensor it created at a
// constant extent (`cos: pl.Tensor[[B_DYN, 64], ...]` given a [4, 64] tensor). The helper's body is
// compiled with what its annotation says: the argument becomes a reshape of the caller's tensor to
// that shape, located at the annotation, whose element count the orchestration checks when the
// program runs (LoopExpander::Reshape). A build per extent refuses such a call at any other extent
// when it compiles, so both builds accept the same calls. Only in orchestration code, and only where
// every axis of the argument is then known (a constant, or the dimension's run-time variable).
ir::Result<bool> FixAnnotatedExtents(py::handle def, std::vector<ir::ExprPtr>& args, const SourceMap& map,
                                     const Constants* constants, const DynamicBindings& bound,
                                     std::vector<ir::StmtPtr>& prelude) {
  py::list params = def.attr("args").attr("args");
  for (size_t i = 0; i < args.size() && i < py::len(params); ++i) {
    const auto* tensor = args[i]->type()->As<ir::TensorType>();
    py::handle annotation = params[i].attr("annotation");
    const auto extents = AnnotatedExtents(annotation, map, constants);
    const auto names = BareDynamicNames(annotation, map, constants);
    if (!tensor || extents.size() != tensor->shape().size() || names.size() != extents.size()) continue;
    const ir::Span span = map.SpanOf(annotation);
    std::vector<ir::ExprPtr> dims;
    bool changed = false;
    for (size_t d = 0; d < extents.size(); ++d) {
      const int64_t extent = tensor->shape()[d];
      auto unbound = names[d].empty() ? bound.end() : bound.find(names[d]);
      if (extent == ir::kDynamicExtent && extents[d]) {
        dims.push_back(std::make_shared<ir::ConstInt>(*extents[d], ir::DataType::INDEX, span));
        changed = true;
      } else if (extent != ir::kDynamicExtent && unbound != bound.end() && unbound->second.var &&
                 !unbound->second.inherited && unbound->second.extent == ir::kDynamicExtent) {
        dims.push_back(unbound->second.var);
        changed = true;
      } else if (extent != ir::kDynamicExtent) {
        dims.push_back(std::make_shared<ir::ConstInt>(extent, ir::DataType::INDEX, span));
      } else {
        changed = false;  // an axis still known only at run time, with no variable here to name it
        break;
      }
    }
    if (!changed) continue;
    auto reshape = ir::OpRegistry::Get().CreateCall(
        "tensor.reshape", {args[i], std::make_shared<ir::TupleLiteral>(std::move(dims), span)}, {}, span);
    if (!reshape) return pypto::unexpected(reshape.error());
    auto var = std::make_shared<ir::Var>(params[i].attr("arg").cast<std::string>(), (*reshape)->type(), span);
    prelude.push_back(std::make_shared<ir::AssignStmt>(var, *reshape, span));
    args[i] = var;
  }
  return true;
}

}  // namespace

// ---- @pl.jit.inline calls ----------------------------------------------------------------------
// An inline function's body is parsed at each call site, against the call's arguments, and its
// statements go before the statement that calls it (prelude_); the call's value is what the
// function returns.

bool FunctionParser::IsMethodCall(py::handle node, std::string_view method) {
  return IsNode(node, "Call") && IsNode(node.attr("func"), "Attribute") &&
         node.attr("func").attr("attr").cast<std::string>() == method;
}

bool FunctionParser::IsInlineCall(py::handle node) const {
  if (!IsNode(node, "Call") || !program_.request) return false;
  auto it = program_.request->functions.find(DottedName(node.attr("func")));
  return it != program_.request->functions.end() && it->second.form == "inline";
}

ir::Result<ir::ExprPtr> FunctionParser::ParseInlineCall(const std::string& name, py::handle node) {
  const ir::Span span = map_.SpanOf(node);
  if (program_.parsing.contains(name))
    return MakeError(DiagnosticKind::Syntax, fmt::format("inline function '{}' calls itself", name), span);
  auto call = ParseSubFunctionCall(name, node);
  if (!call) return pypto::unexpected(call.error());
  call->source.type = source_.type;
  const std::vector<ir::ExprPtr> passed = call->args;
  if (auto ok = PassSlicesAsViews(call->source.def, call->args); !ok) return pypto::unexpected(ok.error());
  FunctionParser inliner(program_, call->source);
  inliner.kernel_depth_ = kernel_depth_;
  inliner.manual_scopes_ = manual_scopes_;
  inliner.dynamic_ = dynamic_;
  for (auto& [name, binding] : inliner.dynamic_) binding.inherited = true;
  BindUnboundArgs(call->source.def, call->args, dynamic_, env_, program_.run_time_shapes, inliner.map_,
                  inliner.source_.constants, inliner.dynamic_);
  if (kernel_depth_ == 0)
    if (auto ok = FixAnnotatedExtents(call->source.def, call->args, inliner.map_, inliner.source_.constants,
                                      inliner.dynamic_, prelude_);
        !ok)
      return pypto::unexpected(ok.error());
  program_.parsing.insert(name);
  auto body = inliner.InlineBody(call->args, span);
  program_.parsing.erase(name);
  if (!body) return pypto::unexpected(body.error());
  prelude_.insert(prelude_.end(), body->stmts.begin(), body->stmts.end());
  ReturnPassedSlices(passed, call->args, body->values);
  if (body->values.size() == 1) return body->values[0];
  return ir::ExprPtr(std::make_shared<ir::TupleLiteral>(body->values, span));
}

// A parameter the body returns as it is stays the caller's value: for an orchestration slice passed
// as a view (PassSlicesAsViews), the slice, not the view made for the call. So
// `part = inline(part, ...)` in a loop leaves `part` the slice it was (upstream's slice is the view,
// and returning its parameter hands back that tensor), rather than rebinding it to another value
// the loop would have to carry.
void FunctionParser::ReturnPassedSlices(const std::vector<ir::ExprPtr>& passed, const std::vector<ir::ExprPtr>& args,
                                        std::vector<ir::ExprPtr>& values) {
  for (auto& value : values)
    for (size_t i = 0; i < args.size(); ++i)
      if (value == args[i] && passed[i] != args[i] && passed[i]->As<ir::Var>()) value = passed[i];
}

// An orchestration slice passed for an inline parameter annotated as a tensor (`x: pl.Tensor`) is a
// view of its window, as for a kernel's parameter: the body loads from it inside its pl.at scopes.
ir::Result<bool> FunctionParser::PassSlicesAsViews(py::handle def, std::vector<ir::ExprPtr>& args) {
  py::list params = def.attr("args").attr("args");
  for (size_t i = 0; i < args.size() && i < py::len(params); ++i) {
    if (!IsTensorAnnotation(params[i].attr("annotation"))) continue;
    auto view = SliceAsView(args[i]);
    if (!view) return pypto::unexpected(view.error());
    args[i] = *view;
  }
  return true;
}

// This parser's function, inlined with `args` for its parameters.
ir::Result<FunctionParser::InlinedBody> FunctionParser::InlineBody(const std::vector<ir::ExprPtr>& args,
                                                                   const ir::Span& call_span) {
  InlinedBody inlined;
  py::list params = source_.def.attr("args").attr("args");
  for (size_t i = 0; i < args.size(); ++i) {
    py::handle param = params[i];
    const std::string name = param.attr("arg").cast<std::string>();
    if (auto ok = CheckInlineArg(param, name, args[i]); !ok) return pypto::unexpected(ok.error());
    if (args[i]->As<ir::Var>()) {  // the caller's variable, under the parameter's name
      env_[name] = std::static_pointer_cast<const ir::Var>(args[i]);
      continue;
    }
    auto var = std::make_shared<ir::Var>(name, args[i]->type(), map_.SpanOf(param));
    RecordScalar(var, args[i]);
    env_[name] = var;
    inlined.stmts.push_back(std::make_shared<ir::AssignStmt>(var, args[i], call_span));
  }
  py::list body = source_.def.attr("body");
  for (size_t i = 0; i < py::len(body); ++i) {
    py::handle stmt = body[i];
    if (IsNode(stmt, "Return")) {
      if (i + 1 != py::len(body))
        return MakeError(DiagnosticKind::Syntax, "an inline function returns only at its end", map_.SpanOf(stmt));
      // `return other_inline(...)`: the body of the inline call in the return goes first.
      auto outer = std::exchange(prelude_, {});
      auto values = ReturnValues(stmt);
      auto returned_body = std::exchange(prelude_, std::move(outer));
      if (!values) return pypto::unexpected(values.error());
      for (const auto& inner : returned_body) Append(inlined.stmts, inner);
      inlined.values = std::move(*values);
      break;
    }
    auto parsed = ParseStatement(stmt);
    if (!parsed) return pypto::unexpected(parsed.error());
    Append(inlined.stmts, *parsed);
  }
  return inlined;
}

// An inline parameter's annotation checks the argument: its shape and dtype, binding the dynamic
// dimensions it names. pl.Out/pl.InOut mean nothing on an inline parameter (the caller's tensor is
// written in place), so they are dropped with a DeprecationWarning, as upstream does.
ir::Result<bool> FunctionParser::CheckInlineArg(py::handle param, const std::string& name, const ir::ExprPtr& arg) {
  py::handle annotation = param.attr("annotation");
  if (annotation.is_none()) return true;
  const auto* tensor = arg->type()->As<ir::TensorType>();
  std::optional<TensorSpec> spec;
  if (tensor) spec = TensorSpec{tensor->shape(), tensor->dtype()};
  const bool scalar_annotation = IsNode(annotation, "Subscript") &&
                                 DottedName(annotation.attr("value")) == "pl.Scalar";
  if (!tensor && !scalar_annotation && !arg->type()->As<ir::ScalarType>())
    return true;  // tiles and other values: the body's ops check them
  if (!tensor && !scalar_annotation)
    return MakeError(DiagnosticKind::Type,
                     fmt::format("parameter '{}' expects a tensor, got {}", name, arg->type()->str()),
                     map_.SpanOf(param));
  auto resolved = ResolveParam(annotation, name, spec ? &*spec : nullptr, map_, source_.constants, &dynamic_);
  if (!resolved) return pypto::unexpected(resolved.error());
  if (resolved->direction != ir::ParamDirection::In)
    PyErr_WarnEx(PyExc_DeprecationWarning,
                 fmt::format("{}: pl.Out/pl.InOut on parameter '{}' of an inline function has no effect",
                             map_.SpanOf(annotation).str(), name)
                     .c_str(),
                 1);
  return true;
}

// `return a, b`: the values, in order (none for a bare return).
ir::Result<std::vector<ir::ExprPtr>> FunctionParser::ReturnValues(py::handle stmt) {
  std::vector<ir::ExprPtr> values;
  py::handle value = stmt.attr("value");
  if (value.is_none()) return values;
  std::vector<py::handle> nodes;
  if (IsNode(value, "Tuple")) {
    for (auto element : value.attr("elts")) nodes.push_back(element);
  } else {
    nodes.push_back(value);
  }
  for (auto node : nodes) {
    auto expr = ParseExpr(node);
    if (!expr) return pypto::unexpected(expr.error());
    values.push_back(*expr);
  }
  return values;
}

// `y = inline_fn(...)` / `a, b = inline_fn(...)`: the names are the values the body returned.
ir::Result<ir::StmtPtr> FunctionParser::BindInlineResult(py::handle target, py::handle call) {
  auto value = ParseExpr(call);
  if (!value) return pypto::unexpected(value.error());
  std::vector<py::handle> names;
  if (IsNode(target, "Tuple")) {
    for (auto element : target.attr("elts")) names.push_back(element);
  } else {
    names.push_back(target);
  }
  std::vector<ir::ExprPtr> values = {*value};
  if (const auto* tuple = (*value)->As<ir::TupleLiteral>(); tuple && names.size() != 1) values = tuple->elements();
  if (values.size() != names.size())
    return MakeError(DiagnosticKind::Type,
                     fmt::format("{}() returns {} values, assigned to {} names", DottedName(call.attr("func")),
                                 values.size(), names.size()),
                     map_.SpanOf(target));
  std::vector<ir::StmtPtr> stmts;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!IsNode(names[i], "Name"))
      return MakeError(DiagnosticKind::Syntax, "the results of an inline call are assigned to plain names",
                       map_.SpanOf(names[i]));
    const std::string name = names[i].attr("id").cast<std::string>();
    if (values[i]->As<ir::Var>()) {
      auto var = std::static_pointer_cast<const ir::Var>(values[i]);
      env_[name] = var;
      unavailable_.erase(name);
      assigned_types_[name] = var->type();
      continue;
    }
    auto var = std::make_shared<ir::Var>(name, values[i]->type(), map_.SpanOf(names[i]));
    RecordScalar(var, values[i]);
    env_[name] = var;
    unavailable_.erase(name);
    assigned_types_[name] = var->type();
    stmts.push_back(std::make_shared<ir::AssignStmt>(var, values[i], map_.SpanOf(names[i])));
  }
  return Seq(std::move(stmts), map_.SpanOf(target));
}

}  // namespace pypto::frontend
