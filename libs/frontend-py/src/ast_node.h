// A thin view over a Python `ast` node: its class name, fields and source span.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

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

}  // namespace pypto::frontend
