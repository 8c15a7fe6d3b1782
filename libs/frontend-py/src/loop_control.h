// The `break` and `continue` statements of a loop body. The frontend parses them into BreakStmt /
// ContinueStmt, and the CtrlFlowTransform pass turns them into structured control flow.
#pragma once

#include <functional>
#include <vector>

#include "ast_node.h"
#include "pypto/ir/stmt.h"

namespace pypto::frontend {

// The jumps that leave the loop whose body is `statements`: those inside nested loops belong to
// those loops, and scopes such as `with pl.at(...)` are not looked into (a jump cannot leave one).
// Hidden, as pybind11's types are: it holds py::handles and never leaves the library.
struct [[gnu::visibility("hidden")]] LoopControl {
  py::handle first_break;
  py::handle first_continue;
  std::vector<py::handle> jumps;  // every one, in source order
  bool any() const { return !jumps.empty(); }
  bool owns(py::handle jump) const;
};
LoopControl FindLoopControl(py::handle statements);

// `body` with each break / continue of its own loop replaced by `rewrite(jump)` (kept when that
// returns null); the jumps of nested loops are left alone.
ir::StmtPtr RewriteOwnJumps(const ir::StmtPtr& body, const std::function<ir::StmtPtr(const ir::JumpStmt&)>& rewrite);

}  // namespace pypto::frontend
