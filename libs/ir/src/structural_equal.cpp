#include "pypto/ir/structural_equal.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"

namespace pypto::ir {
namespace {

using Diff = std::optional<std::string>;

// Nested sequences are not observable in the DSL text: compare the statements they hold. A
// body-less declaration (a hand-written kernel) holds none.
void Flatten(const StmtPtr& stmt, std::vector<StmtPtr>& out) {
  if (!stmt) return;
  if (const auto* seq = stmt->As<SeqStmts>()) {
    for (const auto& child : seq->stmts()) Flatten(child, out);
    return;
  }
  out.push_back(stmt);
}

// A type with any tile memref removed, for comparing call results.
TypePtr WithoutMemRef(const TypePtr& type) {
  if (const auto* tile = type->As<TileType>(); tile && tile->memref())
    return std::make_shared<TileType>(tile->shape(), tile->dtype(), tile->memory_space(), std::nullopt,
                                      tile->valid_shape());
  if (const auto* tuple = type->As<TupleType>()) {
    std::vector<TypePtr> elements;
    for (const auto& element : tuple->elements()) elements.push_back(WithoutMemRef(element));
    return std::make_shared<TupleType>(std::move(elements));
  }
  return type;
}

bool SameDouble(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof a) == 0;  // 0.0 and -0.0 print differently
}

std::string Text(const ExprPtr& expr) { return PrintExpr(expr); }

class Comparer {
 public:
  Diff Functions(const Function& a, const Function& b) {
    lhs_to_rhs_.clear();
    rhs_to_lhs_.clear();
    if (a.name() != b.name()) return fmt::format("function names differ: '{}' vs '{}'", a.name(), b.name());
    auto where = [&](const std::string& what) { return fmt::format("function '{}': {}", a.name(), what); };
    if (a.type() != b.type())
      return where(fmt::format("types differ: {} vs {}", FunctionTypeName(a.type()), FunctionTypeName(b.type())));
    if (a.attrs() != b.attrs()) return where("attributes differ");
    if (a.params().size() != b.params().size())
      return where(fmt::format("{} vs {} parameters", a.params().size(), b.params().size()));
    for (size_t i = 0; i < a.params().size(); ++i) {
      if (auto diff = Define(a.params()[i], b.params()[i])) return where(fmt::format("parameter {}: {}", i, *diff));
      if (a.param_directions()[i] != b.param_directions()[i])
        return where(fmt::format("parameter {}: directions differ: {} vs {}", i,
                                 ParamDirectionName(a.param_directions()[i]),
                                 ParamDirectionName(b.param_directions()[i])));
    }
    if (a.return_types().size() != b.return_types().size())
      return where(fmt::format("{} vs {} return types", a.return_types().size(), b.return_types().size()));
    for (size_t i = 0; i < a.return_types().size(); ++i)
      if (!a.return_types()[i]->equals(*b.return_types()[i]))
        return where(fmt::format("return type {} differs: {} vs {}", i, a.return_types()[i]->str(),
                                 b.return_types()[i]->str()));
    if (auto diff = Body(a.body(), b.body())) return where(*diff);
    return std::nullopt;
  }

 private:
  // Types compared with a tile's valid shape taken through the variable mapping: its extents name
  // variables of the function, which differ as objects between the two sides.
  Diff Types(const TypePtr& a, const TypePtr& b) {
    const auto* x = a->As<TileType>();
    const auto* y = b->As<TileType>();
    if (!x || !y || !x->has_partial_valid_shape() || !y->has_partial_valid_shape())
      return a->equals(*b) ? Diff{} : fmt::format("{} vs {}", a->str(), b->str());
    if (!WithValidShape(*x, {})->equals(*WithValidShape(*y, {})) || x->valid_shape().size() != y->valid_shape().size())
      return fmt::format("{} vs {}", a->str(), b->str());
    for (size_t i = 0; i < x->valid_shape().size(); ++i)
      if (auto diff = Expr(x->valid_shape()[i], y->valid_shape()[i])) return fmt::format("valid shape: {}", *diff);
    return std::nullopt;
  }

  // A variable bound at the same place on both sides.
  Diff Define(const VarPtr& a, const VarPtr& b) {
    if (auto diff = Types(a->type(), b->type())) return fmt::format("'{}' has type {}", a->name_hint(), *diff);
    if (lhs_to_rhs_.contains(a.get()) || rhs_to_lhs_.contains(b.get()))
      return fmt::format("'{}' is bound twice", a->name_hint());
    lhs_to_rhs_[a.get()] = b.get();
    rhs_to_lhs_[b.get()] = a.get();
    return std::nullopt;
  }

  // The values a loop or an if produces.
  Diff Defines(const std::vector<VarPtr>& a, const std::vector<VarPtr>& b, const char* what) {
    if (a.size() != b.size()) return fmt::format("{} produces {} vs {} values", what, a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i)
      if (auto diff = Define(a[i], b[i])) return fmt::format("{} result {}: {}", what, i, *diff);
    return std::nullopt;
  }

  // The blocks an SPMD launch runs on; absent for any other launch.
  Diff BlockCount(const ExprPtr& a, const ExprPtr& b, const std::string& what) {
    if (!a != !b) return fmt::format("{} is an SPMD launch on one side only", what);
    if (!a) return std::nullopt;
    if (auto diff = Expr(a, b)) return fmt::format("{} block counts differ: {}", what, *diff);
    return std::nullopt;
  }

  // The TaskIds a launch waits for (uses) and the one it names (a definition).
  Diff Order(const LaunchOrder& a, const LaunchOrder& b, const std::string& what) {
    if (a.deps.size() != b.deps.size())
      return fmt::format("{} waits for {} vs {} tasks", what, a.deps.size(), b.deps.size());
    for (size_t i = 0; i < a.deps.size(); ++i)
      if (auto diff = Expr(a.deps[i], b.deps[i])) return fmt::format("{} dependency {}: {}", what, i, *diff);
    if (!a.task_id != !b.task_id) return fmt::format("{} names its TaskId on one side only", what);
    if (a.allow_early_resolve != b.allow_early_resolve)
      return fmt::format("{} allows early resolve on one side only", what);
    return a.task_id ? Define(a.task_id, b.task_id) : std::nullopt;
  }

  Diff Use(const Var* a, const Var* b) {
    auto it = lhs_to_rhs_.find(a);
    if (it == lhs_to_rhs_.end()) {
      if (a == b) return std::nullopt;  // the same free variable on both sides
      return fmt::format("'{}' is not bound", a->name_hint());
    }
    if (it->second != b) return fmt::format("'{}' refers to another variable ('{}')", a->name_hint(), b->name_hint());
    return std::nullopt;
  }

  Diff Body(const StmtPtr& a, const StmtPtr& b) {
    std::vector<StmtPtr> as, bs;
    Flatten(a, as);
    Flatten(b, bs);
    if (as.size() != bs.size()) return fmt::format("{} vs {} statements", as.size(), bs.size());
    for (size_t i = 0; i < as.size(); ++i)
      if (auto diff = Stmt(as[i], bs[i])) return fmt::format("statement {}: {}", i, *diff);
    return std::nullopt;
  }

  Diff Stmt(const StmtPtr& a, const StmtPtr& b) {
    if (a->kind() != b->kind()) return std::string("statement kinds differ");
    if (const auto* x = a->As<AssignStmt>()) {
      const auto* y = b->As<AssignStmt>();
      if (auto diff = Expr(x->value(), y->value())) return diff;
      return Define(x->var(), y->var());
    }
    if (const auto* x = a->As<EvalStmt>()) return Expr(x->expr(), b->As<EvalStmt>()->expr());
    if (const auto* x = a->As<ReturnStmt>()) {
      const auto* y = b->As<ReturnStmt>();
      if (x->values().size() != y->values().size())
        return fmt::format("return of {} vs {} values", x->values().size(), y->values().size());
      for (size_t i = 0; i < x->values().size(); ++i)
        if (auto diff = Expr(x->values()[i], y->values()[i])) return diff;
      return std::nullopt;
    }
    if (const auto* x = a->As<ForStmt>()) {
      const auto* y = b->As<ForStmt>();
      if (x->kind() != y->kind()) return fmt::format("loop kinds differ: {} vs {}", ForKindName(x->kind()),
                                                     ForKindName(y->kind()));
      for (auto [ea, eb] : {std::pair{x->start(), y->start()}, {x->stop(), y->stop()}, {x->step(), y->step()}})
        if (auto diff = Expr(ea, eb)) return fmt::format("loop bounds: {}", *diff);
      if (x->iter_args().size() != y->iter_args().size())
        return fmt::format("loops carry {} vs {} values", x->iter_args().size(), y->iter_args().size());
      for (size_t i = 0; i < x->iter_args().size(); ++i)
        if (auto diff = Expr(x->iter_args()[i].init, y->iter_args()[i].init))
          return fmt::format("loop init value {}: {}", i, *diff);
      if (auto diff = Define(x->loop_var(), y->loop_var())) return diff;
      for (size_t i = 0; i < x->iter_args().size(); ++i)
        if (auto diff = Define(x->iter_args()[i].var, y->iter_args()[i].var))
          return fmt::format("loop-carried value {}: {}", i, *diff);
      for (size_t i = 0; i < x->iter_args().size(); ++i)
        if (x->iter_args()[i].carry != y->iter_args()[i].carry)
          return fmt::format("loop-carried value {} is carried as {} vs {}", i, CarryKindName(x->iter_args()[i].carry),
                             CarryKindName(y->iter_args()[i].carry));
      if (auto diff = Body(x->body(), y->body())) return fmt::format("in loop: {}", *diff);
      return Defines(x->return_vars(), y->return_vars(), "loop");
    }
    if (const auto* x = a->As<WhileStmt>()) {
      const auto* y = b->As<WhileStmt>();
      if (x->iter_args().size() != y->iter_args().size())
        return fmt::format("while loops carry {} vs {} values", x->iter_args().size(), y->iter_args().size());
      for (size_t i = 0; i < x->iter_args().size(); ++i)
        if (auto diff = Expr(x->iter_args()[i].init, y->iter_args()[i].init))
          return fmt::format("while init value {}: {}", i, *diff);
      for (size_t i = 0; i < x->iter_args().size(); ++i)
        if (auto diff = Define(x->iter_args()[i].var, y->iter_args()[i].var))
          return fmt::format("while-carried value {}: {}", i, *diff);
      if (auto diff = Expr(x->condition(), y->condition())) return fmt::format("while condition: {}", *diff);
      if (auto diff = Body(x->body(), y->body())) return fmt::format("in while loop: {}", *diff);
      return Defines(x->return_vars(), y->return_vars(), "while loop");
    }
    if (const auto* x = a->As<IfStmt>()) {
      const auto* y = b->As<IfStmt>();
      if (auto diff = Expr(x->condition(), y->condition())) return fmt::format("if condition: {}", *diff);
      if (auto diff = Body(x->then_body(), y->then_body())) return fmt::format("in if branch: {}", *diff);
      if (!x->else_body() != !y->else_body()) return std::string("one if has an else branch, the other not");
      if (x->else_body())
        if (auto diff = Body(x->else_body(), y->else_body())) return fmt::format("in else branch: {}", *diff);
      return Defines(x->return_vars(), y->return_vars(), "if");
    }
    if (const auto* x = a->As<YieldStmt>()) {
      const auto* y = b->As<YieldStmt>();
      if (x->values().size() != y->values().size())
        return fmt::format("yield of {} vs {} values", x->values().size(), y->values().size());
      for (size_t i = 0; i < x->values().size(); ++i)
        if (auto diff = Expr(x->values()[i], y->values()[i])) return diff;
      return std::nullopt;
    }
    if (const auto* x = AsJump(*a)) {
      const auto* y = AsJump(*b);
      if (x->values().size() != y->values().size())
        return fmt::format("{} of {} vs {} values", x->Is<BreakStmt>() ? "break" : "continue", x->values().size(),
                           y->values().size());
      for (size_t i = 0; i < x->values().size(); ++i)
        if (auto diff = Expr(x->values()[i], y->values()[i])) return diff;
      return std::nullopt;
    }
    if (const auto* x = a->As<InCoreScopeStmt>()) {
      const auto* y = b->As<InCoreScopeStmt>();
      if (x->name_hint() != y->name_hint())
        return fmt::format("scope name hints differ: '{}' vs '{}'", x->name_hint(), y->name_hint());
      if (auto diff = BlockCount(x->block_num(), y->block_num(), "scope")) return diff;
      if (x->sync_start() != y->sync_start())
        return fmt::format("scope sync_start differs: {} vs {}", x->sync_start(), y->sync_start());
      if (auto diff = Order(x->order(), y->order(), "scope")) return diff;
      if (auto diff = Body(x->body(), y->body())) return fmt::format("in pl.at scope: {}", *diff);
      return std::nullopt;
    }
    if (const auto* x = a->As<RuntimeScopeStmt>()) {
      const auto* y = b->As<RuntimeScopeStmt>();
      if (x->manual() != y->manual())
        return fmt::format("runtime scope modes differ: {} vs {}", x->manual() ? "manual" : "auto",
                           y->manual() ? "manual" : "auto");
      if (auto diff = Body(x->body(), y->body())) return fmt::format("in runtime scope: {}", *diff);
      return std::nullopt;
    }
    if (a->Is<SeqStmts>()) return Body(a, b);
    return std::string("unknown statement kind");
  }

  Diff Expr(const ExprPtr& a, const ExprPtr& b) {
    auto differ = [&] { return fmt::format("{} vs {}", Text(a), Text(b)); };
    if (a->kind() != b->kind()) return differ();
    if (const auto* x = a->As<Var>()) return Use(x, b->As<Var>());
    if (const auto* x = a->As<ConstInt>()) {
      if (x->value() != b->As<ConstInt>()->value() || !a->type()->equals(*b->type()))
        return fmt::format("{} ({}) vs {} ({})", Text(a), a->type()->str(), Text(b), b->type()->str());
      return std::nullopt;
    }
    if (const auto* x = a->As<ConstFloat>()) {
      if (!SameDouble(x->value(), b->As<ConstFloat>()->value()) || !a->type()->equals(*b->type()))
        return fmt::format("{} ({}) vs {} ({})", Text(a), a->type()->str(), Text(b), b->type()->str());
      return std::nullopt;
    }
    if (const auto* x = a->As<ConstBool>()) {
      if (x->value() != b->As<ConstBool>()->value()) return differ();
      return std::nullopt;
    }
    if (const auto* x = a->As<TupleLiteral>()) {
      const auto* y = b->As<TupleLiteral>();
      if (x->elements().size() != y->elements().size()) return differ();
      for (size_t i = 0; i < x->elements().size(); ++i)
        if (auto diff = Expr(x->elements()[i], y->elements()[i])) return diff;
      return std::nullopt;
    }
    if (const auto* x = a->As<BinaryExpr>()) {
      const auto* y = b->As<BinaryExpr>();
      if (x->op() != y->op() || !a->type()->equals(*b->type())) return differ();
      if (auto diff = Expr(x->lhs(), y->lhs())) return diff;
      return Expr(x->rhs(), y->rhs());
    }
    if (const auto* x = a->As<Call>()) return CallDiff(*x, *b->As<Call>(), differ);
    return std::string("unknown expression kind");
  }

  template <typename F>
  Diff CallDiff(const Call& x, const Call& y, F differ) {
    if (x.op() != y.op() || x.callee() != y.callee())
      return fmt::format("calls '{}' vs '{}'", x.target_name(), y.target_name());
    if (x.args().size() != y.args().size())
      return fmt::format("'{}' with {} vs {} arguments", x.target_name(), x.args().size(), y.args().size());
    for (size_t i = 0; i < x.args().size(); ++i)
      if (auto diff = Expr(x.args()[i], y.args()[i]))
        return fmt::format("'{}' argument {}: {}", x.target_name(), i, *diff);
    auto sorted = [](Call::Kwargs kwargs) {
      std::stable_sort(kwargs.begin(), kwargs.end(), [](const auto& l, const auto& r) { return l.first < r.first; });
      return kwargs;
    };
    if (sorted(x.kwargs()) != sorted(y.kwargs()))
      return fmt::format("'{}' attributes differ: {}", x.target_name(), differ());
    if (x.arg_directions() != y.arg_directions())
      return fmt::format("'{}' argument directions differ", x.target_name());
    if (auto diff = Order(x.order(), y.order(), "'" + x.target_name() + "'")) return diff;
    if (auto diff = BlockCount(x.core_num(), y.core_num(), "'" + x.target_name() + "'")) return diff;
    if (auto diff = Types(WithoutMemRef(x.type()), WithoutMemRef(y.type())))
      return fmt::format("'{}' result types differ: {}", x.target_name(), *diff);
    return std::nullopt;
  }

  std::unordered_map<const Var*, const Var*> lhs_to_rhs_, rhs_to_lhs_;
};

}  // namespace

std::optional<std::string> StructuralDiff(const Function& lhs, const Function& rhs) {
  return Comparer().Functions(lhs, rhs);
}

std::optional<std::string> StructuralDiff(const Program& lhs, const Program& rhs) {
  if (lhs.name() != rhs.name()) return fmt::format("program names differ: '{}' vs '{}'", lhs.name(), rhs.name());
  if (lhs.entry_name() != rhs.entry_name())
    return fmt::format("entries differ: '{}' vs '{}'", lhs.entry_name(), rhs.entry_name());
  if (lhs.functions().size() != rhs.functions().size())
    return fmt::format("{} vs {} functions", lhs.functions().size(), rhs.functions().size());
  Comparer comparer;
  for (size_t i = 0; i < lhs.functions().size(); ++i)
    if (auto diff = comparer.Functions(*lhs.functions()[i], *rhs.functions()[i])) return diff;
  return std::nullopt;
}

}  // namespace pypto::ir
