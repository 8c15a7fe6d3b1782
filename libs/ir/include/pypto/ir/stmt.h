// Statements of a function body.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
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

// How an orchestration loop carries a value, as ClassifyIterArgCarry decides it for codegen-orch:
// a scalar, a TaskId or a TaskId array (a C++ variable assigned at the yield); a tensor whose yielded
// value is the same buffer updated in place by kernels (Alias: no C++ variable of its own, since the
// runtime tracks dependencies by the tensor it was given); or a tensor rebound to another buffer
// (Rebind: a C++ tensor variable reassigned at the yield). Kernel loops stay Unclassified.
enum class CarryKind : uint8_t { Unclassified, Scalar, TaskId, TaskIdArray, Alias, Rebind };
const char* CarryKindName(CarryKind kind);  // the printed spelling: "scalar", "task_id", ...
std::optional<CarryKind> CarryKindNamed(std::string_view name);

// A value carried from one loop iteration to the next: `var` holds `init` in the first iteration
// and what the body yielded in each later one.
struct IterArg {
  VarPtr var;
  ExprPtr init;
  CarryKind carry = CarryKind::Unclassified;
};

// `for loop_var in pl.range(start, stop, step):` with an INDEX loop variable. A loop with carried
// values (`for i, (acc,) in pl.range(n, init_values=(x,)):`) ends its body with a YieldStmt of one
// value per iter_arg; `return_vars` hold the last yielded values after the loop (the inits when it
// runs no iteration).
class ForStmt final : public Stmt {
 public:
  static constexpr NodeKind kKind = NodeKind::ForStmt;
  ForStmt(VarPtr loop_var, ExprPtr start, ExprPtr stop, ExprPtr step, StmtPtr body, ForKind kind, Span span = {})
      : ForStmt(std::move(loop_var), std::move(start), std::move(stop), std::move(step), {}, std::move(body), {},
                kind, std::move(span)) {}
  ForStmt(VarPtr loop_var, ExprPtr start, ExprPtr stop, ExprPtr step, std::vector<IterArg> iter_args, StmtPtr body,
          std::vector<VarPtr> return_vars, ForKind kind, Span span = {})
      : Stmt(kKind, std::move(span)),
        loop_var_(std::move(loop_var)),
        start_(std::move(start)),
        stop_(std::move(stop)),
        step_(std::move(step)),
        iter_args_(std::move(iter_args)),
        body_(std::move(body)),
        return_vars_(std::move(return_vars)),
        kind_(kind) {}
  const VarPtr& loop_var() const { return loop_var_; }
  const ExprPtr& start() const { return start_; }
  const ExprPtr& stop() const { return stop_; }
  const ExprPtr& step() const { return step_; }
  const std::vector<IterArg>& iter_args() const { return iter_args_; }
  const StmtPtr& body() const { return body_; }
  const std::vector<VarPtr>& return_vars() const { return return_vars_; }
  ForKind kind() const { return kind_; }

 private:
  VarPtr loop_var_;
  ExprPtr start_, stop_, step_;
  std::vector<IterArg> iter_args_;
  StmtPtr body_;
  std::vector<VarPtr> return_vars_;
  ForKind kind_;
};

// `while condition:` in a kernel. The condition reads the iter_args and is evaluated before each
// iteration; the body ends with a YieldStmt of one value per iter_arg (the next iteration's values),
// and `return_vars` hold the values for which the condition was false (the inits when it runs no
// iteration). The DSL spells it `while cond:` or `for (a, b) in pl.while_(init_values=(x, y)):`
// with `pl.cond(cond)` as the body's first statement.
class WhileStmt final : public Stmt {
 public:
  static constexpr NodeKind kKind = NodeKind::WhileStmt;
  WhileStmt(ExprPtr condition, std::vector<IterArg> iter_args, StmtPtr body, std::vector<VarPtr> return_vars,
            Span span = {})
      : Stmt(kKind, std::move(span)),
        condition_(std::move(condition)),
        iter_args_(std::move(iter_args)),
        body_(std::move(body)),
        return_vars_(std::move(return_vars)) {}
  const ExprPtr& condition() const { return condition_; }
  const std::vector<IterArg>& iter_args() const { return iter_args_; }
  const StmtPtr& body() const { return body_; }
  const std::vector<VarPtr>& return_vars() const { return return_vars_; }

 private:
  ExprPtr condition_;
  std::vector<IterArg> iter_args_;
  StmtPtr body_;
  std::vector<VarPtr> return_vars_;
};

// What a ForStmt and a WhileStmt share: a body run repeatedly, the values it carries from one
// iteration to the next and the values they end with. Passes that follow only carried values and
// buffers treat both loops alike through it.
struct LoopView {
  const std::vector<IterArg>& iter_args;
  const StmtPtr& body;
  const std::vector<VarPtr>& return_vars;
};
// The loop `stmt` is; nullopt for any other statement.
std::optional<LoopView> AsLoop(const Stmt& stmt);

// `if condition: ... else: ...` on a scalar condition. When the branches produce values
// (`return_vars`, the phis), each branch ends with a YieldStmt of one value per return var.
// `else_body` may be null for an if without else (which then produces no values).
class IfStmt final : public Stmt {
 public:
  static constexpr NodeKind kKind = NodeKind::IfStmt;
  IfStmt(ExprPtr condition, StmtPtr then_body, StmtPtr else_body, std::vector<VarPtr> return_vars, Span span = {})
      : Stmt(kKind, std::move(span)),
        condition_(std::move(condition)),
        then_body_(std::move(then_body)),
        else_body_(std::move(else_body)),
        return_vars_(std::move(return_vars)) {}
  const ExprPtr& condition() const { return condition_; }
  const StmtPtr& then_body() const { return then_body_; }
  const StmtPtr& else_body() const { return else_body_; }  // null without else
  const std::vector<VarPtr>& return_vars() const { return return_vars_; }

 private:
  ExprPtr condition_;
  StmtPtr then_body_, else_body_;
  std::vector<VarPtr> return_vars_;
};

// `pl.yield_(values...)`: the last statement of a loop or if body, handing its values to the
// enclosing statement's return vars (and, in a loop, to the next iteration's iter_args).
class YieldStmt final : public Stmt {
 public:
  static constexpr NodeKind kKind = NodeKind::YieldStmt;
  explicit YieldStmt(std::vector<ExprPtr> values, Span span = {})
      : Stmt(kKind, std::move(span)), values_(std::move(values)) {}
  const std::vector<ExprPtr>& values() const { return values_; }

 private:
  std::vector<ExprPtr> values_;
};

// The yield that ends a body, or null when the body does not end with one.
const YieldStmt* TrailingYield(const StmtPtr& body);

// `break` and `continue` in a pl.range loop, as the frontend parses them. `values` are what the
// innermost enclosing loop carries at the jump, one per iter_arg (none when it carries nothing): a
// break makes them the loop's results, a continue the next iteration's iter_args. A branch of an if
// that ends in a jump does not yield to the if. CtrlFlowTransform removes both
// (IRProperty::StructuredCtrlFlow), so the passes after it and the code generators never see them.
class JumpStmt : public Stmt {
 public:
  JumpStmt(NodeKind kind, std::vector<ExprPtr> values, Span span)
      : Stmt(kind, std::move(span)), values_(std::move(values)) {}
  const std::vector<ExprPtr>& values() const { return values_; }

 private:
  std::vector<ExprPtr> values_;
};

class BreakStmt final : public JumpStmt {
 public:
  static constexpr NodeKind kKind = NodeKind::BreakStmt;
  explicit BreakStmt(std::vector<ExprPtr> values = {}, Span span = {}) : JumpStmt(kKind, std::move(values), std::move(span)) {}
};

class ContinueStmt final : public JumpStmt {
 public:
  static constexpr NodeKind kKind = NodeKind::ContinueStmt;
  explicit ContinueStmt(std::vector<ExprPtr> values = {}, Span span = {})
      : JumpStmt(kKind, std::move(values), std::move(span)) {}
};

// The break or continue `stmt` is; null for any other statement.
const JumpStmt* AsJump(const Stmt& stmt);

// True when control never reaches the end of `body`: its last statement is a break or a continue,
// or an if with an else both of whose branches end so.
bool EndsInJump(const StmtPtr& body);

// `with pl.at(level=pl.Level.CORE_GROUP):` — a region that becomes one InCore kernel. With a
// block_num, `with pl.spmd(N):` around kernel code: the kernel is launched on N blocks, each reading
// its index with pl.tile.get_block_idx(); with sync_start, `with pl.spmd(N, sync_start=True):`, the
// blocks start only together. N is an integer orchestration scalar expression, evaluated each time
// the launch is submitted.
class InCoreScopeStmt final : public Stmt {
 public:
  static constexpr NodeKind kKind = NodeKind::InCoreScopeStmt;
  InCoreScopeStmt(std::string name_hint, StmtPtr body, Span span = {}, ExprPtr block_num = nullptr,
                  bool sync_start = false, LaunchOrder order = {})
      : Stmt(kKind, std::move(span)), name_hint_(std::move(name_hint)), body_(std::move(body)),
        block_num_(std::move(block_num)), sync_start_(sync_start), order_(std::move(order)) {}
  const std::string& name_hint() const { return name_hint_; }
  const StmtPtr& body() const { return body_; }
  // Null for a pl.at scope (one launch); N for a pl.spmd scope.
  const ExprPtr& block_num() const { return block_num_; }
  bool sync_start() const { return sync_start_; }
  // `deps=[...]` and `as tid`: carried to the kernel call that outlining makes of the scope.
  const LaunchOrder& order() const { return order_; }

 private:
  std::string name_hint_;
  StmtPtr body_;
  ExprPtr block_num_;
  bool sync_start_ = false;
  LaunchOrder order_;
};

// `with pl.manual_scope():` (or `with pl.scope(mode=pl.ScopeMode.MANUAL):`) and `with pl.scope():` in
// orchestration code: a runtime scope around the launches of its body. In a manual one the runtime
// derives no dependencies from tensors: launches wait only for the TaskIds their deps= name. Nothing
// nests in a manual scope, and kernels hold none.
class RuntimeScopeStmt final : public Stmt {
 public:
  static constexpr NodeKind kKind = NodeKind::RuntimeScopeStmt;
  RuntimeScopeStmt(bool manual, StmtPtr body, Span span = {})
      : Stmt(kKind, std::move(span)), manual_(manual), body_(std::move(body)) {}
  bool manual() const { return manual_; }
  const StmtPtr& body() const { return body_; }

 private:
  bool manual_ = false;
  StmtPtr body_;
};

}  // namespace pypto::ir
