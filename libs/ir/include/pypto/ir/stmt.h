// Statements of a function body.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pypto/ir/expr.h"

namespace pypto::ir {

class Stmt : public Node {
 public:
  using Node::Node;
};
using StmtPtr = std::shared_ptr<const Stmt>;

// `var = value`; in SSA form each Var is assigned once.
class AssignStmt final : public Stmt {
 public:
  static constexpr NodeKind kKind = NodeKind::AssignStmt;
  AssignStmt(VarPtr var, ExprPtr value, Span span = {})
      : Stmt(kKind, std::move(span)), var_(std::move(var)), value_(std::move(value)) {}
  const VarPtr& var() const { return var_; }
  const ExprPtr& value() const { return value_; }

 private:
  VarPtr var_;
  ExprPtr value_;
};

// An expression evaluated for its effect, e.g. `pl.store(...)` without a target.
class EvalStmt final : public Stmt {
 public:
  static constexpr NodeKind kKind = NodeKind::EvalStmt;
  explicit EvalStmt(ExprPtr expr, Span span = {}) : Stmt(kKind, std::move(span)), expr_(std::move(expr)) {}
  const ExprPtr& expr() const { return expr_; }

 private:
  ExprPtr expr_;
};

class SeqStmts final : public Stmt {
 public:
  static constexpr NodeKind kKind = NodeKind::SeqStmts;
  explicit SeqStmts(std::vector<StmtPtr> stmts, Span span = {})
      : Stmt(kKind, std::move(span)), stmts_(std::move(stmts)) {}
  const std::vector<StmtPtr>& stmts() const { return stmts_; }

 private:
  std::vector<StmtPtr> stmts_;
};

class ReturnStmt final : public Stmt {
 public:
  static constexpr NodeKind kKind = NodeKind::ReturnStmt;
  explicit ReturnStmt(std::vector<ExprPtr> values, Span span = {})
      : Stmt(kKind, std::move(span)), values_(std::move(values)) {}
  const std::vector<ExprPtr>& values() const { return values_; }

 private:
  std::vector<ExprPtr> values_;
};

// The loop forms of the DSL: pl.range (Sequential), pl.parallel, pl.unroll, pl.pipeline.
enum class ForKind : uint8_t { Sequential, Parallel, Unroll, Pipeline };
const char* ForKindName(ForKind kind);  // the DSL spelling: "range", "parallel", ...

// `for loop_var in pl.range(start, stop, step):` with an INDEX loop variable.
class ForStmt final : public Stmt {
 public:
  static constexpr NodeKind kKind = NodeKind::ForStmt;
  ForStmt(VarPtr loop_var, ExprPtr start, ExprPtr stop, ExprPtr step, StmtPtr body, ForKind kind, Span span = {})
      : Stmt(kKind, std::move(span)),
        loop_var_(std::move(loop_var)),
        start_(std::move(start)),
        stop_(std::move(stop)),
        step_(std::move(step)),
        body_(std::move(body)),
        kind_(kind) {}
  const VarPtr& loop_var() const { return loop_var_; }
  const ExprPtr& start() const { return start_; }
  const ExprPtr& stop() const { return stop_; }
  const ExprPtr& step() const { return step_; }
  const StmtPtr& body() const { return body_; }
  ForKind kind() const { return kind_; }

 private:
  VarPtr loop_var_;
  ExprPtr start_, stop_, step_;
  StmtPtr body_;
  ForKind kind_;
};

// `with pl.at(level=pl.Level.CORE_GROUP):` — a region that becomes one InCore kernel.
class InCoreScopeStmt final : public Stmt {
 public:
  static constexpr NodeKind kKind = NodeKind::InCoreScopeStmt;
  InCoreScopeStmt(std::string name_hint, StmtPtr body, Span span = {})
      : Stmt(kKind, std::move(span)), name_hint_(std::move(name_hint)), body_(std::move(body)) {}
  const std::string& name_hint() const { return name_hint_; }
  const StmtPtr& body() const { return body_; }

 private:
  std::string name_hint_;
  StmtPtr body_;
};

}  // namespace pypto::ir
