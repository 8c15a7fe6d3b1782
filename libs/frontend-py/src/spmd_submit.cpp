#include "spmd_submit.h"

#include <fmt/format.h>

#include <utility>

namespace pypto::frontend {
namespace {

using ir::DiagnosticKind;
using ir::MakeError;

py::module_ Ast() { return py::module_::import("ast"); }

// Gives every node of `tree` that has no position yet (those built here) the position of `at`.
py::object Located(py::object tree, py::handle at) {
  for (py::handle node : Ast().attr("walk")(tree)) {
    py::tuple attributes = node.attr("_attributes");
    if (py::len(attributes) > 0 && !py::hasattr(node, "lineno")) Ast().attr("copy_location")(node, at);
  }
  return tree;
}

template <typename... Nodes>
py::list ListOf(Nodes&&... nodes) {
  py::list list;
  (list.append(std::forward<Nodes>(nodes)), ...);
  return list;
}

py::object Load() { return Ast().attr("Load")(); }
py::object Store() { return Ast().attr("Store")(); }
py::object Name(const std::string& id, py::object ctx) { return Ast().attr("Name")(py::arg("id") = id, py::arg("ctx") = ctx); }

py::object Keyword(const std::string& name, py::handle value) {
  return Ast().attr("keyword")(py::arg("arg") = name, py::arg("value") = value);
}

py::object PlCall(const std::string& dotted, py::list args, py::list keywords) {
  py::object func = Name("pl", Load());
  size_t start = 3;  // after "pl."
  while (start < dotted.size()) {
    size_t end = dotted.find('.', start);
    if (end == std::string::npos) end = dotted.size();
    func = Ast().attr("Attribute")(py::arg("value") = func, py::arg("attr") = dotted.substr(start, end - start),
                                   py::arg("ctx") = Load());
    start = end + 1;
  }
  return Ast().attr("Call")(py::arg("func") = func, py::arg("args") = args, py::arg("keywords") = keywords);
}

// `t[i, j]` (or `pl.read(t, [i, j])` / `pl.tensor.read(...)`) as `pl.tensor.read(t, [i, j])`; none otherwise.
py::object ElementRead(py::handle node) {
  if (IsNode(node, "Call")) {
    const std::string callee = DottedName(node.attr("func"));
    return callee == "pl.read" || callee == "pl.tensor.read" ? py::reinterpret_borrow<py::object>(node) : py::none();
  }
  if (!IsNode(node, "Subscript")) return py::none();
  py::handle index = node.attr("slice");
  py::list indices;
  if (IsNode(index, "Tuple"))
    for (auto element : index.attr("elts")) indices.append(element);
  else
    indices.append(index);
  for (auto element : indices)
    if (IsNode(element, "Slice")) return py::none();
  py::list args;
  args.append(node.attr("value"));
  args.append(Ast().attr("List")(py::arg("elts") = indices, py::arg("ctx") = Load()));
  return PlCall("pl.tensor.read", args, py::list());
}

}  // namespace

bool HasPredicate(py::handle spmd_call) {
  for (auto keyword : spmd_call.attr("keywords"))
    if (!keyword.attr("arg").is_none() && keyword.attr("arg").cast<std::string>() == "predicate") return true;
  return false;
}

ir::Result<py::list> RewritePredicatedSpmd(py::handle with_stmt, const std::string& predicate_name,
                                           const SourceMap& map) {
  py::handle item = py::list(with_stmt.attr("items"))[0];
  py::handle spmd = item.attr("context_expr");
  py::handle predicate, deps;
  py::list kept;  // the launch's other options
  for (auto keyword : spmd.attr("keywords")) {
    const std::string key = keyword.attr("arg").is_none() ? "**" : keyword.attr("arg").cast<std::string>();
    if (key == "predicate") {
      predicate = keyword.attr("value");
      continue;
    }
    if (key == "deps") deps = keyword.attr("value");
    kept.append(keyword);
  }
  // Upstream requires one comparison of a tensor element with an integer.
  const bool comparison = IsNode(predicate, "Compare") && py::len(predicate.attr("ops")) == 1;
  py::object read = comparison ? ElementRead(predicate.attr("left")) : py::object(py::none());
  if (read.is_none())
    return MakeError(DiagnosticKind::Syntax,
                     "a dispatch predicate compares one tensor element with an integer: predicate=(t[i, j] > 0)",
                     map.SpanOf(predicate));
  py::object launch_call = Ast().attr("Call")(py::arg("func") = spmd.attr("func"), py::arg("args") = spmd.attr("args"),
                                              py::arg("keywords") = kept);
  py::object launch = Ast().attr("With")(
      py::arg("items") = ListOf(Ast().attr("withitem")(py::arg("context_expr") = launch_call,
                                                       py::arg("optional_vars") = item.attr("optional_vars"))),
      py::arg("body") = with_stmt.attr("body"));
  py::object read_value = Ast().attr("Assign")(py::arg("targets") = ListOf(Name(predicate_name, Store())),
                                               py::arg("value") = read);
  py::object test = Ast().attr("Compare")(py::arg("left") = Name(predicate_name, Load()),
                                          py::arg("ops") = predicate.attr("ops"),
                                          py::arg("comparators") = predicate.attr("comparators"));
  // A launch that does not run still completes its TaskId once its deps have.
  py::list skipped;
  py::handle task_id = item.attr("optional_vars");
  if (!task_id.is_none() && IsNode(task_id, "Name")) {
    py::object dep_list = deps ? py::reinterpret_borrow<py::object>(deps)
                               : Ast().attr("List")(py::arg("elts") = py::list(), py::arg("ctx") = Load());
    skipped.append(Ast().attr("Assign")(
        py::arg("targets") = ListOf(Name(task_id.attr("id").cast<std::string>(), Store())),
        py::arg("value") = PlCall("pl.system.task_dummy", py::list(), ListOf(Keyword("deps", dep_list)))));
  } else {
    skipped.append(Ast().attr("Pass")());
  }
  py::object branch = Ast().attr("If")(py::arg("test") = test, py::arg("body") = ListOf(launch),
                                       py::arg("orelse") = skipped);
  return ListOf(Located(read_value, predicate), Located(branch, with_stmt));
}

ir::Result<py::list> RewriteSpmdSubmit(py::handle stmt, py::handle call, const std::vector<py::handle>& targets,
                                       const std::string& predicate_name, const SourceMap& map) {
  py::list positional = call.attr("args");
  if (py::len(positional) == 0)
    return MakeError(DiagnosticKind::Syntax, "pl.spmd_submit needs the kernel to launch", map.SpanOf(call),
                     "write `out, tid = pl.spmd_submit(self.kernel, x, out, core_num=N)`");
  // The launch: `with pl.spmd(<its keywords>) as tid: outs = kernel(args)`.
  py::object kernel_call = Ast().attr("Call")(py::arg("func") = positional[0],
                                              py::arg("args") = positional[py::slice(1, py::len(positional), 1)],
                                              py::arg("keywords") = py::list());
  std::vector<py::handle> outputs(targets.begin(), targets.end());
  py::handle task_id;
  if (!outputs.empty()) {
    task_id = outputs.back();
    outputs.pop_back();
  }
  const bool named_task = task_id && IsNode(task_id, "Name") && task_id.attr("id").cast<std::string>() != "_";
  py::object body_stmt;
  if (outputs.empty()) {
    body_stmt = Ast().attr("Expr")(py::arg("value") = kernel_call);
  } else {
    py::list stores;
    for (auto output : outputs) stores.append(output);
    py::object target = stores.size() == 1 ? py::object(stores[0])
                                           : Ast().attr("Tuple")(py::arg("elts") = stores, py::arg("ctx") = Store());
    body_stmt = Ast().attr("Assign")(py::arg("targets") = ListOf(target), py::arg("value") = kernel_call);
  }
  py::object item = Ast().attr("withitem")(
      py::arg("context_expr") = PlCall("pl.spmd", py::list(), call.attr("keywords")),
      py::arg("optional_vars") = named_task ? py::object(Name(task_id.attr("id").cast<std::string>(), Store()))
                                            : py::object(py::none()));
  py::object launch = Located(Ast().attr("With")(py::arg("items") = ListOf(item), py::arg("body") = ListOf(body_stmt)),
                              stmt);
  if (HasPredicate(item.attr("context_expr"))) return RewritePredicatedSpmd(launch, predicate_name, map);
  return ListOf(launch);
}

}  // namespace pypto::frontend
