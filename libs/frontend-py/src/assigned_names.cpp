#include "assigned_names.h"

#include <algorithm>

namespace pypto::frontend {
namespace {

void AddTarget(py::handle target, std::vector<std::string>& names) {
  if (IsNode(target, "Name")) {
    auto name = target.attr("id").cast<std::string>();
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(std::move(name));
  } else if (IsNode(target, "Tuple") || IsNode(target, "List")) {
    for (auto element : target.attr("elts")) AddTarget(element, names);
  }
}

bool IsElementWriteCall(py::handle node) {
  if (!IsNode(node, "Call")) return false;
  const std::string name = DottedName(node.attr("func"));
  return name == "pl.write" || name == "pl.tile.write" || name == "pl.tensor.write";
}

void CollectElementWrites(py::handle statements, std::vector<std::string>& names) {
  for (auto stmt : statements) {
    if (IsNode(stmt, "Expr") && IsElementWriteCall(stmt.attr("value"))) {
      py::list args = stmt.attr("value").attr("args");
      if (py::len(args) > 0) AddTarget(args[0], names);
    }
    if (IsNode(stmt, "For") || IsNode(stmt, "While") || IsNode(stmt, "If")) {
      CollectElementWrites(stmt.attr("body"), names);
      CollectElementWrites(stmt.attr("orelse"), names);
    } else if (IsNode(stmt, "With")) {
      CollectElementWrites(stmt.attr("body"), names);
    }
  }
}

void Collect(py::handle statements, std::vector<std::string>& names, bool subscripts) {
  for (auto stmt : statements) {
    if (subscripts) {
      if (IsNode(stmt, "Assign"))
        for (auto target : stmt.attr("targets"))
          if (IsNode(target, "Subscript")) AddTarget(target.attr("value"), names);
    } else if (IsNode(stmt, "Assign")) {
      for (auto target : stmt.attr("targets")) AddTarget(target, names);
    } else if (IsNode(stmt, "AnnAssign") || IsNode(stmt, "AugAssign")) {
      AddTarget(stmt.attr("target"), names);
    }
    if (IsNode(stmt, "For") || IsNode(stmt, "While") || IsNode(stmt, "If")) {
      Collect(stmt.attr("body"), names, subscripts);
      Collect(stmt.attr("orelse"), names, subscripts);
    } else if (IsNode(stmt, "With")) {
      // `with pl.at(...) as tid:` binds the scope's TaskId.
      if (!subscripts)
        for (auto item : stmt.attr("items"))
          if (!item.attr("optional_vars").is_none()) AddTarget(item.attr("optional_vars"), names);
      Collect(stmt.attr("body"), names, subscripts);
    }
  }
}

}  // namespace

std::vector<std::string> AssignedNames(py::handle statements) {
  std::vector<std::string> names;
  Collect(statements, names, false);
  return names;
}

std::vector<std::string> SubscriptAssignedNames(py::handle statements) {
  std::vector<std::string> names;
  Collect(statements, names, true);
  return names;
}

std::vector<std::string> ElementWrittenNames(py::handle statements) {
  std::vector<std::string> names;
  CollectElementWrites(statements, names);
  return names;
}

bool IsYieldCall(py::handle node) { return IsNode(node, "Call") && DottedName(node.attr("func")) == "pl.yield_"; }

}  // namespace pypto::frontend
