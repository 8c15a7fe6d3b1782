// Generic traversal: a visitor that walks every node, and a mutator that rebuilds what changed.
#pragma once

#include <unordered_map>

#include "pypto/ir/function.h"

namespace pypto::ir {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  virtual void VisitExpr(const ExprPtr& expr);
  virtual void VisitStmt(const StmtPtr& stmt);

 protected:
  virtual void VisitVar(const std::shared_ptr<const Var>&) {}
  virtual void VisitCall(const std::shared_ptr<const Call>& call);
  virtual void VisitTupleLiteral(const std::shared_ptr<const TupleLiteral>& tuple);
  virtual void VisitBinary(const std::shared_ptr<const BinaryExpr>& binary);
  virtual void VisitFor(const std::shared_ptr<const ForStmt>& stmt);
  virtual void VisitWhile(const std::shared_ptr<const WhileStmt>& stmt);
  virtual void VisitIf(const std::shared_ptr<const IfStmt>& stmt);
  virtual void VisitYield(const std::shared_ptr<const YieldStmt>& stmt);
  virtual void VisitJump(const std::shared_ptr<const JumpStmt>& stmt);  // a break or a continue
  virtual void VisitAssign(const std::shared_ptr<const AssignStmt>& stmt);
  virtual void VisitEval(const std::shared_ptr<const EvalStmt>& stmt);
  virtual void VisitSeq(const std::shared_ptr<const SeqStmts>& stmt);
  virtual void VisitReturn(const std::shared_ptr<const ReturnStmt>& stmt);
  virtual void VisitInCoreScope(const std::shared_ptr<const InCoreScopeStmt>& stmt);
  virtual void VisitRuntimeScope(const std::shared_ptr<const RuntimeScopeStmt>& stmt);
};

// Returns the same pointer for an unchanged subtree, so sharing is preserved.
class IRMutator {
 public:
  virtual ~IRMutator() = default;
  virtual ExprPtr MutateExpr(const ExprPtr& expr);
  virtual StmtPtr MutateStmt(const StmtPtr& stmt);

 protected:
  virtual ExprPtr MutateVar(const std::shared_ptr<const Var>& var) { return var; }
  virtual ExprPtr MutateCall(const std::shared_ptr<const Call>& call);
  virtual ExprPtr MutateTupleLiteral(const std::shared_ptr<const TupleLiteral>& tuple);
  virtual ExprPtr MutateBinary(const std::shared_ptr<const BinaryExpr>& binary);
  virtual StmtPtr MutateFor(const std::shared_ptr<const ForStmt>& stmt);
  virtual StmtPtr MutateWhile(const std::shared_ptr<const WhileStmt>& stmt);
  virtual StmtPtr MutateIf(const std::shared_ptr<const IfStmt>& stmt);
  virtual StmtPtr MutateYield(const std::shared_ptr<const YieldStmt>& stmt);
  virtual StmtPtr MutateJump(const std::shared_ptr<const JumpStmt>& stmt);  // a break or a continue
  virtual StmtPtr MutateAssign(const std::shared_ptr<const AssignStmt>& stmt);
  virtual StmtPtr MutateEval(const std::shared_ptr<const EvalStmt>& stmt);
  virtual StmtPtr MutateSeq(const std::shared_ptr<const SeqStmts>& stmt);
  virtual StmtPtr MutateReturn(const std::shared_ptr<const ReturnStmt>& stmt);
  virtual StmtPtr MutateInCoreScope(const std::shared_ptr<const InCoreScopeStmt>& stmt);
  virtual StmtPtr MutateRuntimeScope(const std::shared_ptr<const RuntimeScopeStmt>& stmt);
  // Mutates the TaskIds a launch waits for and the one it defines; sets `changed` if any changed.
  LaunchOrder MutateLaunchOrder(const LaunchOrder& order, bool& changed);
  // Mutates an expression that may be absent (a launch's block count); sets `changed` if it changed.
  ExprPtr MutateOptional(const ExprPtr& expr, bool& changed);
};

// Replaces uses (and definitions) of variables by the mapped ones.
StmtPtr SubstituteVars(const StmtPtr& stmt, const std::unordered_map<const Var*, VarPtr>& map);

// Flattens a body into its statement list (a SeqStmts' children, or the single statement).
std::vector<StmtPtr> FlattenStmts(const StmtPtr& stmt);

}  // namespace pypto::ir
