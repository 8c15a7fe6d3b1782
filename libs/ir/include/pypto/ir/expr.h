// Expressions: variables, constants, tuple literals and calls (to ops or to other functions).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pypto/ir/diagnostic.h"
#include "pypto/ir/node.h"
#include "pypto/ir/op_attr.h"
#include "pypto/ir/type.h"

namespace pypto::ir {

class Expr : public Node {
 public:
  Expr(NodeKind kind, Span span, TypePtr type) : Node(kind, std::move(span)), type_(std::move(type)) {}
  const TypePtr& type() const { return type_; }

 private:
  TypePtr type_;
};
using ExprPtr = std::shared_ptr<const Expr>;

// A variable. Identity is the object (and its unique id), never the name, which is only a hint.
class Var final : public Expr {
 public:
  static constexpr NodeKind kKind = NodeKind::Var;
  Var(std::string name_hint, TypePtr type, Span span = {});
  const std::string& name_hint() const { return name_hint_; }
  uint64_t id() const { return id_; }

 private:
  std::string name_hint_;
  uint64_t id_;
};
using VarPtr = std::shared_ptr<const Var>;

class ConstInt final : public Expr {
 public:
  static constexpr NodeKind kKind = NodeKind::ConstInt;
  ConstInt(int64_t value, DataType dtype, Span span = {});
  int64_t value() const { return value_; }

 private:
  int64_t value_;
};

class ConstFloat final : public Expr {
 public:
  static constexpr NodeKind kKind = NodeKind::ConstFloat;
  ConstFloat(double value, DataType dtype, Span span = {});
  double value() const { return value_; }

 private:
  double value_;
};

class ConstBool final : public Expr {
 public:
  static constexpr NodeKind kKind = NodeKind::ConstBool;
  explicit ConstBool(bool value, Span span = {});
  bool value() const { return value_; }

 private:
  bool value_;
};

// `[a, b, ...]` in the DSL: offsets and shapes passed to ops.
class TupleLiteral final : public Expr {
 public:
  static constexpr NodeKind kKind = NodeKind::TupleLiteral;
  TupleLiteral(std::vector<ExprPtr> elements, Span span = {});
  const std::vector<ExprPtr>& elements() const { return elements_; }

 private:
  std::vector<ExprPtr> elements_;
};

// Scalar arithmetic and comparisons on integers (INDEX) and floats, as written in the DSL.
// Shl/Shr shift an integer by a count in [0, 64); Shr is arithmetic, as Python's `>>` is.
enum class BinaryOp : uint8_t { Add, Sub, Mul, FloorDiv, FloorMod, FloatDiv, Min, Max, Shl, Shr, Eq, Ne, Lt, Le, Gt, Ge };
const char* BinaryOpSymbol(BinaryOp op);  // "+", "//", ... ("min"/"max" print as calls)
bool IsComparison(BinaryOp op);

// `l op r` for a comparison op (IsComparison), on values known when compiling or planning.
template <typename T>
bool EvaluateComparison(BinaryOp op, T l, T r) {
  switch (op) {
    case BinaryOp::Eq: return l == r;
    case BinaryOp::Ne: return l != r;
    case BinaryOp::Lt: return l < r;
    case BinaryOp::Le: return l <= r;
    case BinaryOp::Gt: return l > r;
    default: return l >= r;
  }
}

class BinaryExpr final : public Expr {
 public:
  static constexpr NodeKind kKind = NodeKind::BinaryExpr;
  BinaryExpr(BinaryOp op, ExprPtr lhs, ExprPtr rhs, TypePtr type, Span span = {});
  BinaryOp op() const { return op_; }
  const ExprPtr& lhs() const { return lhs_; }
  const ExprPtr& rhs() const { return rhs_; }

 private:
  BinaryOp op_;
  ExprPtr lhs_, rhs_;
};

// Builds `lhs op rhs`, folding integer constants (so offsets like `2 * 64` stay static) and
// rejecting operands that are not scalars.
Result<ExprPtr> MakeBinary(BinaryOp op, const ExprPtr& lhs, const ExprPtr& rhs, const Span& span);

// How a call site passes a tensor argument to a task; written by the DeriveCallDirections pass.
enum class ArgDirection : uint8_t { Input, Output, InOut, OutputExisting, NoDep, Scalar };
const char* ArgDirectionName(ArgDirection direction);

struct OpDef;

// A call to a registered op (`op()` set) or to another function of the program (`callee()` set).
// The keyword of an SPMD launch (a function call with a core_num), `sync_start=True` (a bool): the
// blocks start only together, each holding a core.
inline constexpr const char* kSyncStartKwarg = "sync_start";

// The explicit ordering of a kernel launch in orchestration code: the TaskIds it waits for
// (`deps=[...]`, on top of the dependencies the runtime derives from the tensors) and the variable
// that names its own TaskId for later launches (`as tid`, or the last target of `pl.submit`).
struct LaunchOrder {
  std::vector<ExprPtr> deps;  // TaskId scalars
  std::shared_ptr<const Var> task_id;       // defined by the launch; null when nothing names it
  // allow_early_resolve=True: the launch's consumers may be staged on idle cores before it finishes
  // (a scheduling hint to the runtime; what runs is unchanged).
  bool allow_early_resolve = false;
  bool empty() const { return deps.empty() && !task_id && !allow_early_resolve; }
};

class Call final : public Expr {
 public:
  static constexpr NodeKind kKind = NodeKind::Call;
  // Compile-time keyword attributes of an op call (dtype=, target_memory=, ...).
  using Kwargs = OpAttrs;

  Call(const OpDef* op, std::vector<ExprPtr> args, Kwargs kwargs, TypePtr type, Span span = {});
  // A function call. A core_num makes it an SPMD launch of that many blocks (`with
  // pl.spmd(core_num=N):` around the call): an integer orchestration scalar expression, evaluated
  // each time the call is submitted. Its kwargs are launch attributes: "sync_start" (a bool, true
  // when present) co-starts the blocks (`with pl.spmd(core_num=N, sync_start=True):`).
  Call(std::string callee, std::vector<ExprPtr> args, TypePtr type, Span span = {},
       std::vector<ArgDirection> arg_directions = {}, Kwargs kwargs = {}, LaunchOrder order = {},
       ExprPtr core_num = nullptr);

  const OpDef* op() const { return op_; }
  const std::string& callee() const { return callee_; }
  bool is_op_call() const { return op_ != nullptr; }
  const std::vector<ExprPtr>& args() const { return args_; }
  const Kwargs& kwargs() const { return kwargs_; }
  // One direction per argument for function calls once directions are derived; empty before.
  const std::vector<ArgDirection>& arg_directions() const { return arg_directions_; }
  // A function call's explicit task ordering; empty for op calls.
  const LaunchOrder& order() const { return order_; }
  // The block count of an SPMD launch; null for any other call.
  const ExprPtr& core_num() const { return core_num_; }
  // The op name, or the callee's function name.
  const std::string& target_name() const;

 private:
  const OpDef* op_ = nullptr;
  std::string callee_;
  std::vector<ExprPtr> args_;
  Kwargs kwargs_;
  std::vector<ArgDirection> arg_directions_;
  LaunchOrder order_;
  ExprPtr core_num_;
};
using CallPtr = std::shared_ptr<const Call>;

// Folds an expression to an integer when it is a literal (the only form static shapes take today).
std::optional<int64_t> AsConstInt(const ExprPtr& expr);

}  // namespace pypto::ir
