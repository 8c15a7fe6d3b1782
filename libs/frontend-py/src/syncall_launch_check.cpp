#include "syncall_launch_check.h"

#include <unordered_set>

#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"

namespace pypto::frontend {
namespace {

// The first hard syncall in a body, looking into the functions it calls (a Group's members).
class HardSyncallFinder final : public ir::IRVisitor {
 public:
  explicit HardSyncallFinder(const ir::Program& program) : program_(program) {}

  const ir::Call* Find(const ir::StmtPtr& body) {
    found_ = nullptr;
    VisitStmt(body);
    return found_;
  }

 protected:
  void VisitCall(const std::shared_ptr<const ir::Call>& call) override {
    if (found_) return;
    if (ir::IsHardSyncall(*call)) {
      found_ = call.get();
      return;
    }
    if (!call->is_op_call() && visited_.insert(call->callee()).second)
      if (auto callee = program_.Find(call->callee()); callee && callee->body()) VisitStmt(callee->body());
    IRVisitor::VisitCall(call);
  }

 private:
  const ir::Program& program_;
  std::unordered_set<std::string> visited_;
  const ir::Call* found_ = nullptr;
};

ir::Result<bool> Refuse(const ir::Call& syncall) {
  return ir::MakeError(ir::DiagnosticKind::InvalidOperation,
                       "a hard pl.system.syncall waits for every block of its launch, but this kernel is not launched "
                       "with sync_start=True",
                       syncall.span(),
                       "launch it with pl.spmd(N, sync_start=True), so that all N blocks hold a core at once, or use "
                       "mode=\"soft\" with a gm_workspace");
}

// Walks the launching (non-kernel) functions: their scopes and their calls of kernels.
class LaunchChecker final : public ir::IRVisitor {
 public:
  explicit LaunchChecker(const ir::Program& program) : program_(program) {}
  const ir::Call* refused = nullptr;

 protected:
  void VisitInCoreScope(const std::shared_ptr<const ir::InCoreScopeStmt>& scope) override {
    if (!refused && !scope->sync_start()) refused = HardSyncallFinder(program_).Find(scope->body());
  }
  void VisitCall(const std::shared_ptr<const ir::Call>& call) override {
    if (refused || call->is_op_call()) return IRVisitor::VisitCall(call);
    auto callee = program_.Find(call->callee());
    const bool co_started = ir::FindAttr<bool>(call->kwargs(), ir::kSyncStartKwarg).value_or(false);
    if (callee && callee->body() && !co_started && callee->type() != ir::FunctionType::Opaque &&
        callee->type() != ir::FunctionType::Orchestration)
      refused = HardSyncallFinder(program_).Find(callee->body());
    IRVisitor::VisitCall(call);
  }

 private:
  const ir::Program& program_;
};

}  // namespace

ir::Result<bool> CheckHardSyncallLaunches(const ir::Program& program) {
  for (const auto& function : program.functions()) {
    if (ir::IsKernel(function->type()) || function->type() == ir::FunctionType::Group || !function->body()) continue;
    LaunchChecker checker(program);
    checker.VisitStmt(function->body());
    if (checker.refused) return Refuse(*checker.refused);
  }
  return true;
}

}  // namespace pypto::frontend
