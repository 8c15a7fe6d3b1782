// `break` and `continue` in a loop body, rewritten into structured control flow before the loop is
// parsed: the IR has no jumps out of a body, so every path through the rewritten body runs to its end.
#pragma once

#include <optional>
#include <string>

#include "ast_node.h"

namespace pypto::frontend {

// The first `break` and the first `continue` that leave the loop whose body is `statements` (those
// inside nested loops belong to those loops, and scopes such as `with pl.at(...)` are not looked
// into: a jump cannot leave one). Null handles where there is none.
struct LoopControl {
  py::handle first_break;
  py::handle first_continue;
  bool any() const { return first_break || first_continue; }
};
LoopControl FindLoopControl(py::handle statements);

// The statements reached before a `break`/`continue` (at any depth of ifs) that is reached itself.
// Both jumps inside an if split what follows the if between its branches:
//
//   A; if c: (B; continue); C       ->  A; if c: B else: C
//   A; if c: (B; break); C          ->  A; if c: (B; flag = 1) else: C
//
// and a loop that breaks runs its whole body under `if flag == 0:`, `flag` set to 0 before the loop
// (a value the loop carries). When a branch falls through, the statements after the if are repeated
// in it, each copy keeping its source positions. `flag_name` names the flag.
// Hidden, as pybind11's types are: it holds py::objects and never leaves the library.
struct [[gnu::visibility("hidden")]] LoopControlRewrite {
  py::object body;                      // the new loop body (a list of statements)
  std::optional<py::object> flag_init;  // `flag = 0`, to place before the loop, when the loop breaks
};
LoopControlRewrite RewriteLoopControl(py::handle statements, const std::string& flag_name);

}  // namespace pypto::frontend
