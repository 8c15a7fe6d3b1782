#include "loop_control.h"

namespace pypto::frontend {
namespace {

py::list AsList(py::handle statements) { return py::reinterpret_borrow<py::list>(statements); }

void Find(py::handle statements, LoopControl& found) {
  for (auto stmt : AsList(statements)) {
    if (IsNode(stmt, "Break") && !found.first_break) found.first_break = stmt;
    if (IsNode(stmt, "Continue") && !found.first_continue) found.first_continue = stmt;
    if (IsNode(stmt, "If")) {
      Find(stmt.attr("body"), found);
      Find(stmt.attr("orelse"), found);
    }
  }
}

bool HasLoopControl(py::handle stmt) {
  if (IsNode(stmt, "Break") || IsNode(stmt, "Continue")) return true;
  return IsNode(stmt, "If") &&
         (FindLoopControl(stmt.attr("body")).any() || FindLoopControl(stmt.attr("orelse")).any());
}

class Rewriter {
 public:
  explicit Rewriter(std::string flag_name) : ast_(py::module_::import("ast")), flag_name_(std::move(flag_name)) {}

  // `statements` with every jump turned into the end of its path.
  py::list Rewrite(const py::list& statements) {
    py::list out;
    for (size_t i = 0; i < py::len(statements); ++i) {
      py::handle stmt = statements[i];
      if (IsNode(stmt, "Continue")) return out;
      if (IsNode(stmt, "Break")) {
        out.append(SetFlag(1, stmt));
        return out;
      }
      if (!HasLoopControl(stmt)) {
        out.append(stmt);
        continue;
      }
      // What follows the if runs at the end of each branch that falls through.
      py::list then_branch = Rewrite(Concat(stmt.attr("body"), statements, i + 1));
      py::list else_branch = Rewrite(Concat(stmt.attr("orelse"), statements, i + 1));
      if (py::len(then_branch) == 0) then_branch.append(Located(ast_.attr("Pass")(), stmt));
      out.append(Located(ast_.attr("If")(py::arg("test") = stmt.attr("test"), py::arg("body") = then_branch,
                                         py::arg("orelse") = else_branch),
                         stmt));
      return out;
    }
    return out;
  }

  py::object SetFlag(int value, py::handle at) {
    py::list targets;
    targets.append(Located(ast_.attr("Name")(py::arg("id") = flag_name_, py::arg("ctx") = ast_.attr("Store")()), at));
    return Located(ast_.attr("Assign")(py::arg("targets") = targets, py::arg("value") = Constant(value, at)), at);
  }

  // `if flag == 0: body`
  py::object UnlessBroken(const py::list& body, py::handle at) {
    py::list ops, comparators;
    ops.append(ast_.attr("Eq")());
    comparators.append(Constant(0, at));
    py::object test = Located(
        ast_.attr("Compare")(
            py::arg("left") = Located(ast_.attr("Name")(py::arg("id") = flag_name_, py::arg("ctx") = ast_.attr("Load")()),
                                      at),
            py::arg("ops") = ops, py::arg("comparators") = comparators),
        at);
    return Located(ast_.attr("If")(py::arg("test") = test, py::arg("body") = body, py::arg("orelse") = py::list()),
                   at);
  }

 private:
  py::object Constant(int value, py::handle at) { return Located(ast_.attr("Constant")(py::arg("value") = value), at); }

  py::object Located(py::object node, py::handle at) { return ast_.attr("copy_location")(node, at); }

  // `branch` followed by `statements[from:]`.
  static py::list Concat(py::handle branch, const py::list& statements, size_t from) {
    py::list joined;
    for (auto stmt : branch) joined.append(stmt);
    for (size_t i = from; i < py::len(statements); ++i) joined.append(statements[i]);
    return joined;
  }

  py::module_ ast_;
  std::string flag_name_;
};

}  // namespace

LoopControl FindLoopControl(py::handle statements) {
  LoopControl found;
  Find(statements, found);
  return found;
}

LoopControlRewrite RewriteLoopControl(py::handle statements, const std::string& flag_name) {
  Rewriter rewriter(flag_name);
  const py::list body = AsList(statements);
  LoopControlRewrite rewrite{.body = rewriter.Rewrite(body)};
  const LoopControl control = FindLoopControl(statements);
  if (!control.first_break) return rewrite;
  py::list guarded;
  guarded.append(rewriter.UnlessBroken(rewrite.body, body[0]));
  rewrite.body = guarded;
  rewrite.flag_init = rewriter.SetFlag(0, body[0]);
  return rewrite;
}

}  // namespace pypto::frontend
