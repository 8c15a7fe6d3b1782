#include "constant_lists.h"

#include <set>

#include "assigned_names.h"

namespace pypto::frontend {
namespace {

using Lists = std::map<std::string, const std::vector<int64_t>*>;

// The names `def` binds itself: parameters, assignment targets and loop variables.
std::set<std::string> LocalNames(py::handle def) {
  std::set<std::string> names;
  for (auto arg : def.attr("args").attr("args")) names.insert(arg.attr("arg").cast<std::string>());
  for (const auto& name : AssignedNames(def.attr("body"))) names.insert(name);
  const py::module_ ast = py::module_::import("ast");
  for (auto node : ast.attr("walk")(def))
    if (IsNode(node, "For"))
      for (auto target : ast.attr("walk")(node.attr("target")))
        if (IsNode(target, "Name")) names.insert(target.attr("id").cast<std::string>());
  return names;
}

py::object ListLiteral(const std::vector<int64_t>& values, py::handle at) {
  const py::module_ ast = py::module_::import("ast");
  py::list elements;
  for (int64_t value : values) elements.append(ast.attr("copy_location")(ast.attr("Constant")(value), at));
  return ast.attr("copy_location")(ast.attr("List")(py::arg("elts") = elements, py::arg("ctx") = ast.attr("Load")()),
                                   at);
}

bool IsListRead(py::handle node, const Lists& lists) {
  return IsNode(node, "Name") && IsNode(node.attr("ctx"), "Load") &&
         lists.contains(node.attr("id").cast<std::string>());
}

void Inline(py::handle node, const Lists& lists) {
  for (auto field : node.attr("_fields")) {
    const std::string name = field.cast<std::string>();
    if (!py::hasattr(node, name.c_str())) continue;
    py::object value = node.attr(name.c_str());
    if (py::isinstance<py::list>(value)) {
      py::list items = value;
      for (size_t i = 0; i < py::len(items); ++i) {
        if (IsListRead(items[i], lists))
          items[i] = ListLiteral(*lists.at(items[i].attr("id").cast<std::string>()), items[i]);
        else if (py::hasattr(items[i], "_fields"))
          Inline(items[i], lists);
      }
    } else if (IsListRead(value, lists)) {
      node.attr(name.c_str()) = ListLiteral(*lists.at(value.attr("id").cast<std::string>()), value);
    } else if (py::hasattr(value, "_fields")) {
      Inline(value, lists);
    }
  }
}

}  // namespace

void InlineConstantLists(py::handle def, const Constants& constants) {
  Lists lists;
  for (const auto& [name, value] : constants)
    if (const auto* list = std::get_if<std::vector<int64_t>>(&value)) lists[name] = list;
  if (lists.empty()) return;
  for (const auto& local : LocalNames(def)) lists.erase(local);
  if (lists.empty()) return;
  for (auto stmt : def.attr("body")) Inline(stmt, lists);
}

}  // namespace pypto::frontend
