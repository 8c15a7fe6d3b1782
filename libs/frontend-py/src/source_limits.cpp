#include "source_limits.h"

#include <fmt/format.h>

#include <utility>
#include <vector>

namespace pypto::frontend {

namespace {

ir::Result<bool> CheckIntegerLiteral(py::handle node, const SourceMap& map) {
  py::object value = node.attr("value");
  if (!py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value)) return true;
  int overflow = 0;
  (void)PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow == 0) return true;
  // Python refuses to print an integer of more than 4300 digits; such a literal is named by its size.
  const auto bits = value.attr("bit_length")().cast<int64_t>();
  std::string literal = bits <= 1024 ? std::string(py::str(value)) : fmt::format("of {} bits", bits);
  return ir::MakeError(ir::DiagnosticKind::Syntax, fmt::format("integer literal {} does not fit in 64 bits", literal),
                       map.SpanOf(node),
                       "integers in a program are INT64 at most: -9223372036854775808 to 9223372036854775807");
}

}  // namespace

ir::Result<bool> CheckSourceLimits(py::handle tree, const SourceMap& map) {
  py::module_ ast = py::module_::import("ast");
  const py::object expr_class = ast.attr("expr");
  const py::object stmt_class = ast.attr("stmt");
  const py::object children_of = ast.attr("iter_child_nodes");
  // (node, how many expressions enclose it, itself included; a statement starts again from 0)
  std::vector<std::pair<py::object, int>> pending{{py::reinterpret_borrow<py::object>(tree), 0}};
  while (!pending.empty()) {
    auto [node, depth] = std::move(pending.back());
    pending.pop_back();
    if (py::isinstance(node, expr_class)) {
      if (depth > kMaxExpressionDepth)
        return ir::MakeError(ir::DiagnosticKind::Syntax,
                             fmt::format("expression nested more than {} levels deep", kMaxExpressionDepth),
                             map.SpanOf(node), "split it into several statements, naming the parts");
      if (IsNode(node, "Constant"))
        if (auto ok = CheckIntegerLiteral(node, map); !ok) return ok;
    }
    for (py::handle child : children_of(node)) {
      const int nesting = py::isinstance(child, expr_class) ? depth + 1 : py::isinstance(child, stmt_class) ? 0 : depth;
      pending.emplace_back(py::reinterpret_borrow<py::object>(child), nesting);
    }
  }
  return true;
}

}  // namespace pypto::frontend
