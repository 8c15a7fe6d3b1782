// A thin view over a Python `ast` node: its class name, fields and source span.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "pypto/ir/span.h"

namespace pypto::frontend {

namespace py = pybind11;

// Where AST positions land in the user's file.
struct SourceMap {
  std::string filename;
  int line_offset = 0;
  int column_offset = 0;

  ir::Span SpanOf(py::handle node) const {
    if (!py::hasattr(node, "lineno")) return ir::Span{filename, 0, 0};
    return ir::Span{filename, node.attr("lineno").cast<int>() + line_offset,
                    node.attr("col_offset").cast<int>() + 1 + column_offset};
  }
};

inline std::string NodeType(py::handle node) { return py::str(py::type::handle_of(node).attr("__name__")); }
inline bool IsNode(py::handle node, const char* type) { return !node.is_none() && NodeType(node) == type; }

// "pl.tile.load" for Attribute(Attribute(Name(pl), tile), load); "" when not a dotted name.
inline std::string DottedName(py::handle node) {
  if (IsNode(node, "Name")) return node.attr("id").cast<std::string>();
  if (IsNode(node, "Attribute")) {
    std::string base = DottedName(node.attr("value"));
    return base.empty() ? "" : base + "." + node.attr("attr").cast<std::string>();
  }
  return "";
}

// `dotted(args..., keywords...)` standing where `original` stands (`dotted` is "pl.store",
// "pl.tile.gather"): the call a DSL spelling is rewritten into, keeping the user's argument nodes so
// that its checks point at them.
inline py::object RewrittenCall(py::handle original, const std::string& dotted, const std::vector<py::object>& args,
                                const py::list& keywords) {
  py::module_ ast = py::module_::import("ast");
  const py::handle where = original.attr("func");
  size_t dot = dotted.find('.');
  py::object func = ast.attr("Name")(dotted.substr(0, dot), ast.attr("Load")());
  ast.attr("copy_location")(func, where);
  while (dot != std::string::npos) {
    const size_t next = dotted.find('.', dot + 1);
    func = ast.attr("Attribute")(func, dotted.substr(dot + 1, next - dot - 1), ast.attr("Load")());
    ast.attr("copy_location")(func, where);
    dot = next;
  }
  py::list call_args;
  for (const auto& arg : args) call_args.append(arg);
  py::object call = ast.attr("Call")(func, call_args, keywords);
  ast.attr("copy_location")(call, original);
  return call;
}

}  // namespace pypto::frontend
