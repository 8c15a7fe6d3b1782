// FunctionParser: tensors whose shape is known only at run time (`buf = pl.create_tensor([rows, D])`
// with `rows` computed from a loop variable or read from a tensor). Our tensors have static types, so
// such a tensor gets a static shape from one of two places: the kernel parameter it is handed to, or
// the constant bound of each run-time dimension (a ragged last tile, `pl.min(TILE, t - base)`). The
// run-time extents stay what loops, valid shapes and `pl.tensor.dim` see.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "function_parser.h"
#include "pypto/ir/op_registry.h"
#include "result_binding.h"

namespace pypto::frontend {

using ir::DiagnosticKind;
using ir::MakeError;

namespace {

// Whether the entry passes a dimension unbound (a program compiled once for every extent), whose
// extent it reads when the program runs.
bool CompiledForEveryExtent(const DynamicBindings& bindings) {
  return std::ranges::any_of(bindings, [](const auto& entry) { return entry.second.var != nullptr; });
}

}  // namespace

// `buf = pl.create_tensor([16, head_dim], ...)` / `qi = pl.slice(query, [16, head_dim], [row, 0])` in
// orchestration code with a dimension read from a tensor (upstream's paged attention reads them
// from a config tensor): the shape is known only when the program runs, and a tensor's type here is
// static. Such a tensor exists to be handed to kernels, so it takes the shape of the parameter the
// first call after it passes it to (a kernel reading fewer rows or columns than its parameter has is
// the kernel's business, as on the device); a created one no call takes is allocated at the bound of
// its shape (BoundedShape). Null when `stmt` makes no such tensor.
ir::Result<ir::StmtPtr> FunctionParser::ParseRunTimeShapedTensor(py::handle target, py::handle stmt) {
  const std::string name = target.attr("id").cast<std::string>();
  py::handle value = stmt.attr("value");
  if (kernel_depth_ > 0 || !IsNode(value, "Call")) return ir::StmtPtr{};
  const std::string callee = DottedName(value.attr("func"));
  const bool create = callee == "pl.create_tensor" || callee == "pl.tensor.create";
  const bool slice = callee == "pl.slice" || callee == "pl.tensor.slice";
  py::list args = value.attr("args");
  const size_t shape_index = create ? 0 : 1;
  if ((!create && !slice) || py::len(args) <= shape_index + (slice ? 1 : 0) || !IsNode(args[shape_index], "List"))
    return ir::StmtPtr{};
  bool run_time = false;
  std::vector<ir::ExprPtr> parsed_dims;
  for (auto element : args[shape_index].attr("elts")) {
    auto dim = ParseExpr(element);
    if (!dim) return pypto::unexpected(dim.error());
    run_time |= !ir::AsConstInt(*dim) && (*dim)->type()->As<ir::ScalarType>();
    parsed_dims.push_back(*dim);
  }
  if (!run_time) return ir::StmtPtr{};
  const ir::Span span = map_.SpanOf(value);
  auto param = FirstParameterTaking(name, stmt);
  std::vector<int64_t> shape_dims;
  if (param) {
    shape_dims = param->type.shape();
  } else if (auto bounded = create ? BoundedShape(parsed_dims) : std::nullopt) {
    WarnOnCompositeShape(args[shape_index], parsed_dims);
    shape_dims = *bounded;
  } else if (create && CompiledForEveryExtent(dynamic_)) {
    // A program compiled once for every extent: the dimension (computed from the extents the entry
    // reads) stays a run-time one, pl.DYN in the type; the plan computes it at each run.
    WarnOnCompositeShape(args[shape_index], parsed_dims);
    auto made = ParseExpr(value);
    if (!made) return pypto::unexpected(made.error());
    auto bound = BindAssigned(target, stmt, (*made)->type(), *made);
    program_.run_time_shapes[env_[name]->id()] = parsed_dims;
    return bound;
  } else {
    return MakeError(DiagnosticKind::Type,
                     fmt::format("'{}' has a shape known only at run time{}; such a tensor takes the shape of the "
                                 "kernel parameter it is passed to, and no function call after it passes '{}'",
                                 name, create ? " with no bound the compiler can find" : "", name),
                     span,
                     create ? "bound each run-time dimension with pl.min(CONSTANT, ...), or give it a shape of "
                              "integer constants"
                            : "give it a shape of integer constants");
  }
  py::module_ ast = py::module_::import("ast");
  py::list dims;
  for (int64_t dim : shape_dims) {
    dims.append(ast.attr("Constant")(dim));
    ast.attr("copy_location")(dims[dims.size() - 1], value);
  }
  py::object shape = ast.attr("List")(dims, ast.attr("Load")());
  ast.attr("copy_location")(shape, args[shape_index]);
  ir::Result<ir::ExprPtr> made = pypto::unexpected(ir::Diagnostic{});
  if (create) {
    std::vector<py::object> rewritten = {shape};
    for (size_t i = 1; i < py::len(args); ++i) rewritten.push_back(args[i]);
    made = ParseExpr(RewrittenCall(value, "pl.create_tensor", rewritten, value.attr("keywords")));
  } else {
    auto base = ParseExpr(args[0]);
    if (!base) return pypto::unexpected(base.error());
    auto offsets = ParseExpr(args[2]);
    if (!offsets) return pypto::unexpected(offsets.error());
    auto dims_expr = ParseExpr(shape);
    if (!dims_expr) return pypto::unexpected(dims_expr.error());
    auto call = ir::OpRegistry::Get().CreateCall("tensor.slice", {*base, *dims_expr, *offsets}, {}, span);
    if (call) made = ir::ExprPtr(*call);
    else made = pypto::unexpected(call.error());
  }
  if (!made)
    return MakeError(made.error().kind,
                     fmt::format("'{}' has a shape known only at run time, and takes the shape [{}] of {}: {}", name,
                                 fmt::join(shape_dims, ", "),
                                 param ? param->where : std::string("its run-time bound"), made.error().message),
                     span);
  auto bound = BindAssigned(target, stmt, (*made)->type(), *made);
  if (!param) program_.run_time_shapes[env_[name]->id()] = parsed_dims;
  return bound;
}

// The tensor parameter of a function of the program that the first call after `stmt` (in source
// order) passes the variable `name` to, positionally or by keyword.
std::optional<FunctionParser::ParameterUse> FunctionParser::FirstParameterTaking(const std::string& name,
                                                                                 py::handle stmt) {
  if (!program_.methods || !function_def_) return std::nullopt;
  const auto after = std::make_pair(stmt.attr("end_lineno").cast<int>(), stmt.attr("end_col_offset").cast<int>());
  std::optional<std::pair<int, int>> best;
  std::optional<ParameterUse> found;
  for (auto node : py::module_::import("ast").attr("walk")(function_def_)) {
    if (!IsNode(node, "Call")) continue;
    const auto at = std::make_pair(node.attr("lineno").cast<int>(), node.attr("col_offset").cast<int>());
    if (at < after || (best && *best < at)) continue;
    std::string callee = DottedName(node.attr("func"));
    if (callee.starts_with("self.")) callee = callee.substr(5);
    auto method = program_.methods->find(callee);
    if (method == program_.methods->end()) continue;
    const auto& params = method->second.params;
    auto take = [&](size_t i) {
      const auto* tensor = i < params.size() ? params[i]->type()->As<ir::TensorType>() : nullptr;
      if (!tensor) return;
      best = at;
      found.emplace(ParameterUse{*tensor, fmt::format("{}() parameter '{}'", callee, params[i]->name_hint())});
    };
    py::list positional = node.attr("args");
    for (size_t i = 0; i < py::len(positional); ++i)
      if (IsNode(positional[i], "Name") && positional[i].attr("id").cast<std::string>() == name) take(i);
    for (auto keyword : node.attr("keywords")) {
      if (keyword.attr("arg").is_none() || !IsNode(keyword.attr("value"), "Name") ||
          keyword.attr("value").attr("id").cast<std::string>() != name)
        continue;
      const std::string key = keyword.attr("arg").cast<std::string>();
      for (size_t i = 0; i < params.size(); ++i)
        if (params[i]->name_hint() == key) take(i);
    }
  }
  return found;
}

// The static shape of a created tensor whose run-time dimensions all have a constant upper bound:
// each run-time dimension at its bound (at least 1), each constant one as it is.
std::optional<std::vector<int64_t>> FunctionParser::BoundedShape(const std::vector<ir::ExprPtr>& dims) const {
  const ScalarDefinition definition = [this](const ir::Var& var) { return ScalarValue(var); };
  const LoopRangeOf loop_range = [this](const ir::Var& var) -> std::optional<LoopRange> {
    auto it = program_.loop_ranges.find(var.id());
    if (it == program_.loop_ranges.end()) return std::nullopt;
    return it->second;
  };
  std::vector<int64_t> shape;
  for (const auto& dim : dims) {
    if (auto constant = ir::AsConstInt(dim)) {
      shape.push_back(*constant);
      continue;
    }
    const ScalarBounds bounds = BoundsOf(dim, definition, loop_range);
    if (!bounds.hi) return std::nullopt;
    shape.push_back(std::max<int64_t>(*bounds.hi, 1));
  }
  return shape;
}

// Seed 001 (dynamic shapes) asks for a run-time dimension of pl.create_tensor to be one named scalar,
// and upstream PyPTO rejects arithmetic written in the shape list. It works here; say that it will
// not work there.
void FunctionParser::WarnOnCompositeShape(py::handle shape_list, const std::vector<ir::ExprPtr>& dims) {
  size_t i = 0;
  for (auto element : shape_list.attr("elts")) {
    const bool run_time = i < dims.size() && !ir::AsConstInt(dims[i]);
    ++i;
    if (!run_time || IsNode(element, "Name") || IsNode(element, "Attribute")) continue;
    WarnAt(map_.SpanOf(element),
           "a run-time dimension computed inside the shape list works here, but upstream PyPTO rejects it; "
           "compute it into a named local first (`rows = ...; pl.create_tensor([rows, ...])`)");
  }
}

}  // namespace pypto::frontend
