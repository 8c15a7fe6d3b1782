#include "boolean_conditions.h"

#include "assigned_names.h"

namespace pypto::frontend {
namespace {

bool EndsWithYield(py::handle statements) {
  py::list list = py::reinterpret_borrow<py::list>(statements);
  if (py::len(list) == 0) return false;
  py::handle last = list[py::len(list) - 1];
  return py::hasattr(last, "value") && IsYieldCall(last.attr("value"));
}

// An `ast.If` placed where `at` is, so diagnostics inside it point at the user's source.
py::object MakeIf(const py::module_& ast, py::handle test, py::handle body, py::handle orelse, py::handle at) {
  py::object node = ast.attr("If")(py::arg("test") = test, py::arg("body") = body, py::arg("orelse") = orelse);
  return ast.attr("copy_location")(node, at);
}

// `b and c` of `a and b and c`: the operands after the first, still joined by the operator.
py::object RestOf(const py::module_& ast, py::handle bool_op) {
  py::list values = bool_op.attr("values");
  if (py::len(values) == 2) return values[1];
  py::list rest;
  for (size_t i = 1; i < py::len(values); ++i) rest.append(values[i]);
  py::object node = ast.attr("BoolOp")(py::arg("op") = bool_op.attr("op"), py::arg("values") = rest);
  ast.attr("copy_location")(node, values[1]);
  node.attr("end_lineno") = bool_op.attr("end_lineno");
  node.attr("end_col_offset") = bool_op.attr("end_col_offset");
  return node;
}

}  // namespace

std::optional<py::object> ExpandBooleanCondition(py::handle if_stmt) {
  py::handle test = if_stmt.attr("test");
  const bool is_not = IsNode(test, "UnaryOp") && IsNode(test.attr("op"), "Not");
  if (!IsNode(test, "BoolOp") && !is_not) return std::nullopt;
  const py::module_ ast = py::module_::import("ast");
  py::handle body = if_stmt.attr("body"), orelse = if_stmt.attr("orelse");
  if (is_not) {
    py::list then_branch = py::reinterpret_borrow<py::list>(orelse);
    if (py::len(then_branch) == 0) {  // `if not a: X` is `if a: pass else: X`
      then_branch = py::list();
      then_branch.append(ast.attr("copy_location")(ast.attr("Pass")(), if_stmt));
    }
    return MakeIf(ast, test.attr("operand"), then_branch, body, if_stmt);
  }
  py::list values = test.attr("values");
  py::object inner = MakeIf(ast, RestOf(ast, test), body, orelse, if_stmt);
  py::list nested;
  nested.append(inner);
  if (IsNode(test.attr("op"), "And")) return MakeIf(ast, values[0], nested, orelse, if_stmt);
  return MakeIf(ast, values[0], body, nested, if_stmt);
}

std::string BooleanConditionRefusal(py::handle if_stmt) {
  if (!IsNode(if_stmt.attr("test"), "BoolOp")) return "";  // `not` only swaps the branches
  if (EndsWithYield(if_stmt.attr("body")) || EndsWithYield(if_stmt.attr("orelse")))
    return "an if whose branches end in pl.yield_ takes one comparison; 'and', 'or' and 'not' are supported in "
           "ifs whose branches assign names";
  return "";
}

}  // namespace pypto::frontend
