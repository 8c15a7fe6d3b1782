// FunctionParser: explicit task order: deps=[...], `as tid` TaskIds, pl.submit / pl.spmd_submit
// launches and pl.system.task_dummy.
#include "function_parser.h"

#include <fmt/format.h>

#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"
#include "spmd_launch.h"
#include "spmd_submit.h"

namespace pypto::frontend {

using ir::DiagnosticKind;
using ir::MakeError;

// ---- explicit task order: deps=[...] and `as tid` -----------------------------------------------

// `deps=[a, b]`: TaskIds the launch waits for on top of what its tensors imply; None is dropped.
ir::Result<std::vector<ir::ExprPtr>> FunctionParser::ParseDeps(py::handle value) {
  if (IsNode(value, "ListComp")) return ParseDepsComprehension(value);
  if (!IsNode(value, "List") && !IsNode(value, "Tuple"))
    return MakeError(DiagnosticKind::Syntax, "deps= takes a list of TaskIds, such as deps=[tid]", map_.SpanOf(value));
  std::vector<ir::ExprPtr> deps;
  for (auto item : value.attr("elts")) {
    if (IsNode(item, "Constant") && item.attr("value").is_none()) continue;
    auto dep = ParseDep(item);
    if (!dep) return pypto::unexpected(dep.error());
    deps.push_back(*dep);
  }
  return deps;
}

// `deps=[tids[g * n + j] for j in range(n)]`: the comprehension is unrolled at compile time, so
// `range`'s bounds must be constants; `j` is each value in turn.
ir::Result<std::vector<ir::ExprPtr>> FunctionParser::ParseDepsComprehension(py::handle comp) {
  const char* form = "deps= takes a comprehension of the form [tids[i] for i in range(n)] with constant bounds";
  auto generators = comp.attr("generators");
  if (py::len(generators) != 1) return MakeError(DiagnosticKind::Syntax, form, map_.SpanOf(comp));
  py::handle generator = generators[py::int_(0)];
  py::handle target = generator.attr("target"), iter = generator.attr("iter");
  if (!IsNode(target, "Name") || py::len(generator.attr("ifs")) > 0 || !IsNode(iter, "Call") ||
      DottedName(iter.attr("func")) != "range" || py::len(iter.attr("keywords")) > 0)
    return MakeError(DiagnosticKind::Syntax, form, map_.SpanOf(generator));
  std::vector<int64_t> bounds;
  for (auto arg : iter.attr("args")) {
    auto bound = ParseExpr(arg);
    if (!bound) return pypto::unexpected(bound.error());
    auto known = ir::AsConstInt(*bound);
    if (!known)
      return MakeError(DiagnosticKind::Syntax, form, map_.SpanOf(arg),
                       "the bounds of range() here are unrolled, so they must be constants");
    bounds.push_back(*known);
  }
  if (bounds.empty() || bounds.size() > 3) return MakeError(DiagnosticKind::Syntax, form, map_.SpanOf(iter));
  const int64_t start = bounds.size() > 1 ? bounds[0] : 0, stop = bounds.size() > 1 ? bounds[1] : bounds[0];
  const int64_t step = bounds.size() > 2 ? bounds[2] : 1;
  if (step == 0) return MakeError(DiagnosticKind::InvalidOperation, "range() step cannot be zero", map_.SpanOf(iter));
  const std::string name = target.attr("id").cast<std::string>();
  auto outer = env_;
  std::vector<ir::ExprPtr> deps;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    auto index = std::make_shared<ir::Var>(name, std::make_shared<ir::ScalarType>(ir::DataType::INDEX),
                                           map_.SpanOf(target));
    program_.known_ints[index->id()] = i;
    env_[name] = index;
    auto dep = ParseDep(comp.attr("elt"));
    if (!dep) {
      env_ = std::move(outer);
      return pypto::unexpected(dep.error());
    }
    deps.push_back(*dep);
  }
  env_ = std::move(outer);
  return deps;
}

// One entry of deps=: a TaskId, or an array of them.
ir::Result<ir::ExprPtr> FunctionParser::ParseDep(py::handle item) {
  auto dep = ParseExpr(item);
  if (!dep) return pypto::unexpected(dep.error());
  if (!ir::IsTaskId(*(*dep)->type()) && !ir::IsTaskIdArray(*(*dep)->type()))
    return MakeError(DiagnosticKind::Type,
                     fmt::format("deps= takes TaskIds, but '{}' is {}", ir::PrintExpr(*dep), (*dep)->type()->str()),
                     map_.SpanOf(item),
                     "bind a launch's TaskId with `with pl.at(...) as tid:` or `out, tid = pl.submit(...)`");
  return *dep;
}

// The `as tid` target of a launch scope, bound in the enclosing code (null when there is none).
ir::Result<ir::VarPtr> FunctionParser::BindScopeTaskId(py::handle target, const char* scope) {
  if (target.is_none()) return ir::VarPtr{};
  if (!IsNode(target, "Name"))
    return MakeError(DiagnosticKind::Syntax, fmt::format("`with {}(...) as tid` binds one name", scope),
                     map_.SpanOf(target));
  return BindTaskId(target.attr("id").cast<std::string>(), map_.SpanOf(target));
}

bool FunctionParser::IsSubmit(py::handle value) const {
  if (!IsNode(value, "Call")) return false;
  const std::string callee = DottedName(value.attr("func"));
  return callee == "pl.submit" || callee == "pl.spmd_submit";
}

// `outs, tid = pl.spmd_submit(self.k, x, core_num=N[, deps=..., predicate=...])`: the pl.spmd launch
// it stands for (spmd_submit.cpp), parsed in place.
ir::Result<ir::StmtPtr> FunctionParser::ParseSpmdSubmit(py::handle stmt, py::handle value,
                                                        const std::vector<py::handle>& targets) {
  auto statements = RewriteSpmdSubmit(stmt, value, targets, fmt::format("_dispatch_predicate_{}", next_predicate_++),
                                      map_);
  if (!statements) return pypto::unexpected(statements.error());
  return ParseBlock(*statements);
}

// `out, tid = pl.submit(self.kernel, x, out, deps=[...])`, or with no result `tid = pl.submit(...)`
// / `pl.submit(...)`: the kernel call `out = self.kernel(x, out)` launched in that order. `targets`
// are the assignment's names (the last one, if any, is the TaskId; `_` drops it).
ir::Result<ir::StmtPtr> FunctionParser::ParseSubmit(py::handle stmt, py::handle value,
                                                    std::vector<py::handle> targets) {
  if (DottedName(value.attr("func")) == "pl.spmd_submit") return ParseSpmdSubmit(stmt, value, targets);
  const ir::Span span = map_.SpanOf(value);
  if (kernel_depth_ > 0) return MakeError(DiagnosticKind::Syntax, "pl.submit launches a kernel from orchestration code", span);
  py::list positional = value.attr("args");
  if (py::len(positional) == 0)
    return MakeError(DiagnosticKind::Syntax, "pl.submit needs the kernel to launch", span,
                     "write `out, tid = pl.submit(self.kernel, x, out)`");
  ir::LaunchOrder order;
  std::vector<size_t> dumped;
  py::list keywords;
  for (auto keyword : value.attr("keywords")) {
    const std::string key = keyword.attr("arg").is_none() ? "" : keyword.attr("arg").cast<std::string>();
    if (key == "deps") {
      auto deps = ParseDeps(keyword.attr("value"));
      if (!deps) return pypto::unexpected(deps.error());
      order.deps = std::move(*deps);
    } else if (key == "allow_early_resolve") {
      auto flag = BoolOption(keyword.attr("value"), "pl.submit allow_early_resolve");
      if (!flag) return pypto::unexpected(flag.error());
      order.allow_early_resolve = *flag;
    } else if (key == "dumps") {
      auto positions = DumpedPositions(keyword.attr("value"), positional);
      if (!positions) return pypto::unexpected(positions.error());
      dumped = std::move(*positions);
    } else {
      keywords.append(keyword);
    }
  }
  py::handle task_target = targets.empty() ? py::handle() : targets.back();
  if (!targets.empty()) targets.pop_back();
  if (targets.size() > 1)
    return MakeError(DiagnosticKind::Syntax, "pl.submit of a kernel with several results is not supported yet",
                     map_.SpanOf(stmt));
  // The launch as a plain call: `out = kernel(x, out)`, parsed like any kernel call statement.
  py::module_ ast = py::module_::import("ast");
  py::object call = ast.attr("Call")(positional[0], positional[py::slice(1, py::len(positional), 1)], keywords);
  ast.attr("copy_location")(call, value);
  py::object plain = targets.empty() ? ast.attr("Expr")(call)
                                     : ast.attr("Assign")(py::make_tuple(targets[0]), call);
  ast.attr("copy_location")(plain, stmt);
  auto parsed = targets.empty() ? ParseKernelCallStatement(plain) : ParseAssign(plain, false);
  if (!parsed) return parsed;
  if (task_target && IsNode(task_target, "Name") && task_target.attr("id").cast<std::string>() != "_")
    order.task_id = BindTaskId(task_target.attr("id").cast<std::string>(), map_.SpanOf(task_target));
  else if (task_target && !IsNode(task_target, "Name"))
    return MakeError(DiagnosticKind::Syntax, "the TaskId of pl.submit is bound to a plain name",
                     map_.SpanOf(task_target));
  return LaunchInOrder(*parsed, std::move(order), span, dumped);
}

// `dumps=[x, s]` of `pl.submit(self.k, x, s, ...)`: the positions among the kernel's arguments of the
// names listed, each of which must be one of them.
ir::Result<std::vector<size_t>> FunctionParser::DumpedPositions(py::handle list, const py::list& positional) {
  if (!IsNode(list, "List") && !IsNode(list, "Tuple"))
    return MakeError(DiagnosticKind::Syntax, "pl.submit dumps= takes a list of the launch's arguments",
                     map_.SpanOf(list), "write `dumps=[x, out]`");
  std::vector<size_t> positions;
  for (auto element : list.attr("elts")) {
    std::optional<size_t> found;
    for (size_t i = 1; IsNode(element, "Name") && i < py::len(positional) && !found; ++i) {
      py::handle arg = positional[i];
      if (IsNode(arg, "Name") && arg.attr("id").cast<std::string>() == element.attr("id").cast<std::string>())
        found = i - 1;
    }
    if (!found)
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("pl.submit dumps= names arguments of this launch; `{}` is not one of them",
                                   py::module_::import("ast").attr("unparse")(element).cast<std::string>()),
                       map_.SpanOf(element));
    positions.push_back(*found);
  }
  return positions;
}

// `pl.system.task_dummy(deps=[a, b])` (the printer writes the list positionally).
ir::Result<ir::ExprPtr> FunctionParser::ParseTaskDummy(py::handle node) {
  const ir::Span span = map_.SpanOf(node);
  if (kernel_depth_ > 0)
    return MakeError(DiagnosticKind::Syntax, "pl.system.task_dummy orders tasks in orchestration code, not in a kernel",
                     span);
  py::list positional = node.attr("args");
  py::list keywords = node.attr("keywords");
  py::handle deps_node;
  if (py::len(positional) == 1 && py::len(keywords) == 0) deps_node = positional[0];
  if (py::len(positional) == 0 && py::len(keywords) == 1 && !keywords[0].attr("arg").is_none() &&
      keywords[0].attr("arg").cast<std::string>() == "deps")
    deps_node = keywords[0].attr("value");
  if (!deps_node)
    return MakeError(DiagnosticKind::Syntax, "pl.system.task_dummy takes one argument, deps=[...]", span);
  auto deps = ParseDeps(deps_node);
  if (!deps) return pypto::unexpected(deps.error());
  auto call = ir::OpRegistry::Get().CreateCall("system.task_dummy", {Tuple(*deps, map_.SpanOf(deps_node))}, {}, span);
  if (!call) return pypto::unexpected(call.error());
  return ir::ExprPtr(*call);
}

ir::Result<ir::StmtPtr> FunctionParser::ParseKernelCallStatement(py::handle stmt) {
  auto expr = ParseExpr(stmt.attr("value"));
  if (!expr) return pypto::unexpected(expr.error());
  return ir::StmtPtr(std::make_shared<ir::EvalStmt>(*expr, map_.SpanOf(stmt)));
}

// `as tid`: the launch's TaskId, a pl.Scalar[pl.TASK_ID], which the launch defines.
ir::VarPtr FunctionParser::BindTaskId(const std::string& name, const ir::Span& span) {
  auto var = std::make_shared<ir::Var>(name, std::make_shared<ir::ScalarType>(ir::DataType::TASK_ID), span);
  env_[name] = var;
  unavailable_.erase(name);
  return var;
}

}  // namespace pypto::frontend
