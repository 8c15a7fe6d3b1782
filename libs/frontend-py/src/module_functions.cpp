#include "module_functions.h"

namespace pypto::frontend {
namespace {

// `self.<name>`, placed where `at` is.
py::object SelfAttribute(const std::string& name, py::handle at) {
  const py::module_ ast = py::module_::import("ast");
  py::object self = ast.attr("copy_location")(ast.attr("Name")(py::arg("id") = "self", py::arg("ctx") = ast.attr("Load")()), at);
  return ast.attr("copy_location")(
      ast.attr("Attribute")(py::arg("value") = self, py::arg("attr") = name, py::arg("ctx") = ast.attr("Load")()), at);
}

bool NamesOneOf(py::handle node, const std::set<std::string>& functions) {
  return IsNode(node, "Name") && functions.contains(node.attr("id").cast<std::string>());
}

}  // namespace

void AddSelfParameter(py::handle def) {
  const py::module_ ast = py::module_::import("ast");
  py::object self = ast.attr("copy_location")(ast.attr("arg")(py::arg("arg") = "self"), def);
  py::list params = def.attr("args").attr("args");
  params.insert(0, self);
}

void BindModuleFunctionCalls(py::handle tree, const std::set<std::string>& functions) {
  if (functions.empty()) return;
  for (py::handle node : py::module_::import("ast").attr("walk")(tree)) {
    if (!IsNode(node, "Call")) continue;
    py::handle func = node.attr("func");
    if (NamesOneOf(func, functions)) {
      node.attr("func") = SelfAttribute(func.attr("id").cast<std::string>(), func);
      continue;
    }
    py::list args = node.attr("args");
    if (DottedName(func) == "pl.submit" && py::len(args) > 0 && NamesOneOf(args[0], functions))
      args[0] = SelfAttribute(args[0].attr("id").cast<std::string>(), args[0]);
  }
}

}  // namespace pypto::frontend
