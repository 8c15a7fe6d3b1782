#include "loop_control.h"

#include <algorithm>

#include "pypto/ir/functor.h"

namespace pypto::frontend {
namespace {

void Find(py::handle statements, LoopControl& found) {
  for (auto stmt : py::reinterpret_borrow<py::list>(statements)) {
    const bool is_break = IsNode(stmt, "Break"), is_continue = IsNode(stmt, "Continue");
    if (is_break && !found.first_break) found.first_break = stmt;
    if (is_continue && !found.first_continue) found.first_continue = stmt;
    if (is_break || is_continue) found.jumps.push_back(stmt);
    if (IsNode(stmt, "If")) {
      Find(stmt.attr("body"), found);
      Find(stmt.attr("orelse"), found);
    }
  }
}

class OwnJumpRewriter final : public ir::IRMutator {
 public:
  explicit OwnJumpRewriter(const std::function<ir::StmtPtr(const ir::JumpStmt&)>& rewrite) : rewrite_(rewrite) {}

 protected:
  ir::StmtPtr MutateJump(const std::shared_ptr<const ir::JumpStmt>& stmt) override {
    auto rewritten = rewrite_(*stmt);
    return rewritten ? rewritten : stmt;
  }
  ir::StmtPtr MutateFor(const std::shared_ptr<const ir::ForStmt>& stmt) override { return stmt; }
  ir::StmtPtr MutateWhile(const std::shared_ptr<const ir::WhileStmt>& stmt) override { return stmt; }
  ir::StmtPtr MutateInCoreScope(const std::shared_ptr<const ir::InCoreScopeStmt>& stmt) override { return stmt; }
  ir::StmtPtr MutateRuntimeScope(const std::shared_ptr<const ir::RuntimeScopeStmt>& stmt) override { return stmt; }

 private:
  const std::function<ir::StmtPtr(const ir::JumpStmt&)>& rewrite_;
};

}  // namespace

ir::StmtPtr RewriteOwnJumps(const ir::StmtPtr& body, const std::function<ir::StmtPtr(const ir::JumpStmt&)>& rewrite) {
  return OwnJumpRewriter(rewrite).MutateStmt(body);
}

bool LoopControl::owns(py::handle jump) const {
  return std::ranges::any_of(jumps, [&](py::handle own) { return own.ptr() == jump.ptr(); });
}

LoopControl FindLoopControl(py::handle statements) {
  LoopControl found;
  Find(statements, found);
  return found;
}

}  // namespace pypto::frontend
