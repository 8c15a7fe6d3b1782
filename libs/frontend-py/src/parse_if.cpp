// FunctionParser: if statements, with the names their branches assign merged after them.
#include "function_parser.h"

#include <fmt/format.h>

#include "boolean_conditions.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/tensor_aliases.h"

namespace pypto::frontend {

using ir::DiagnosticKind;
using ir::MakeError;

ir::Diagnostic FunctionParser::Unavailable(std::string message, std::string hint) const {
  return ir::Diagnostic{DiagnosticKind::UndefinedName, std::move(message), {}, std::move(hint)};
}

// After a branch or loop, `name` has no value: reading it reports why.
void FunctionParser::MarkUnavailable(const std::string& name, ir::Diagnostic diagnostic) {
  env_.erase(name);
  unavailable_[name] = std::move(diagnostic);
}

// `if cond:` / `else:`. A condition known at compile time keeps only the branch it selects.
ir::Result<ir::StmtPtr> FunctionParser::ParseIf(py::handle stmt) {
  const ir::Span span = map_.SpanOf(stmt);
  if (auto expanded = ExpandBooleanCondition(stmt)) {
    if (auto why = BooleanConditionRefusal(stmt); !why.empty())
      return MakeError(DiagnosticKind::Syntax, why, map_.SpanOf(stmt.attr("test")),
                       "compute the condition into a name before the if, or use one if inside the other");
    synthetic_nodes_.push_back(*expanded);
    return ParseIf(synthetic_nodes_.back());
  }
  auto condition = ParseExpr(stmt.attr("test"));
  if (!condition) return pypto::unexpected(condition.error());
  const auto* scalar = (*condition)->type()->As<ir::ScalarType>();
  if (!scalar)
    return MakeError(DiagnosticKind::Type,
                     fmt::format("the if condition must be a scalar, got {}", (*condition)->type()->str()),
                     map_.SpanOf(stmt.attr("test")));
  std::optional<bool> known;
  if (const auto* b = (*condition)->As<ir::ConstBool>()) known = b->value();
  if (auto i = ir::AsConstInt(*condition)) known = *i != 0;
  if (known) return ParseBlock(*known ? stmt.attr("body") : stmt.attr("orelse"));
  // In orchestration code the condition is on orchestration scalars; codegen-orch checks that the
  // task plan can evaluate it.
  const auto before = env_;
  auto then_body = ParseBody(stmt.attr("body"));
  if (!then_body) return pypto::unexpected(then_body.error());
  auto then_env = env_;
  env_ = before;
  const bool has_else = py::len(stmt.attr("orelse")) > 0;
  ParsedBody else_body;
  if (has_else) {
    auto parsed = ParseBody(stmt.attr("orelse"));
    if (!parsed) return pypto::unexpected(parsed.error());
    else_body = std::move(*parsed);
  }
  auto else_env = env_;
  env_ = before;
  const bool then_jumps = ir::EndsInJump(Seq(then_body->stmts)), else_jumps = ir::EndsInJump(Seq(else_body.stmts));
  if (then_jumps || else_jumps)
    return FinishIfWithJump(*condition, std::move(*then_body), std::move(else_body), has_else,
                            then_jumps ? else_env : then_env, then_jumps, before, span);
  if (then_body->yield || else_body.yield)
    return FinishExplicitIf(*condition, std::move(*then_body), std::move(else_body), has_else, span);
  return FinishImplicitIf(stmt, *condition, std::move(*then_body), std::move(else_body), has_else, then_env,
                          else_env, before, span);
}

// Branches ending in `r = pl.yield_(v)`: both yield the same number of values of the same types.
ir::Result<ir::StmtPtr> FunctionParser::FinishExplicitIf(const ir::ExprPtr& condition, ParsedBody then_body,
                                                         ParsedBody else_body, bool has_else, const ir::Span& span) {
  if (!then_body.yield || !else_body.yield || !has_else)
    return MakeError(DiagnosticKind::Syntax, "when one branch of an if ends with pl.yield_, both must", span);
  const auto& values = then_body.yield->values;
  if (values.size() != else_body.yield->values.size())
    return MakeError(DiagnosticKind::Type,
                     fmt::format("the if branch yields {} values but the else branch {}", values.size(),
                                 else_body.yield->values.size()),
                     else_body.yield->span);
  for (size_t i = 0; i < values.size(); ++i)
    if (!values[i]->type()->equals(*else_body.yield->values[i]->type()))
      return MakeError(DiagnosticKind::Type,
                       fmt::format("the branches yield different types: {} vs {}", values[i]->type()->str(),
                                   else_body.yield->values[i]->type()->str()),
                       else_body.yield->span);
  auto results = YieldResults(*then_body.yield);
  if (!results) return pypto::unexpected(results.error());
  for (const auto& var : *results) env_[var->name_hint()] = var;
  then_body.stmts.push_back(std::make_shared<ir::YieldStmt>(values, then_body.yield->span));
  else_body.stmts.push_back(std::make_shared<ir::YieldStmt>(else_body.yield->values, else_body.yield->span));
  return ir::StmtPtr(std::make_shared<ir::IfStmt>(condition, Seq(std::move(then_body.stmts)),
                                                  Seq(std::move(else_body.stmts)), std::move(*results), span));
}

// An if one or both of whose branches end in a break or continue: after it, names have the values
// the other branch gives them (`fall_env`), yielded by that branch alone; after an if both of whose
// branches jump, nothing runs.
ir::Result<ir::StmtPtr> FunctionParser::FinishIfWithJump(const ir::ExprPtr& condition, ParsedBody then_body,
                                                         ParsedBody else_body, bool has_else, const Env& fall_env,
                                                         bool then_jumps, const Env& before, const ir::Span& span) {
  auto finish = [&](std::vector<ir::VarPtr> results) {
    ir::StmtPtr else_stmt = has_else || !results.empty() ? Seq(std::move(else_body.stmts)) : nullptr;
    return ir::StmtPtr(std::make_shared<ir::IfStmt>(condition, Seq(std::move(then_body.stmts)), else_stmt,
                                                    std::move(results), span));
  };
  if (then_jumps && ir::EndsInJump(Seq(else_body.stmts))) return finish({});
  ParsedBody& falls = then_jumps ? else_body : then_body;
  if (falls.yield) {  // as the printer writes it: `r = pl.yield_(v)` in the branch that falls through
    auto results = YieldResults(*falls.yield);
    if (!results) return pypto::unexpected(results.error());
    for (const auto& var : *results) env_[var->name_hint()] = var;
    falls.stmts.push_back(std::make_shared<ir::YieldStmt>(falls.yield->values, falls.yield->span));
    return finish(std::move(*results));
  }
  std::vector<ir::ExprPtr> values;
  std::vector<ir::VarPtr> results;
  const ir::TensorAliases aliases(Seq(falls.stmts));
  for (const auto& [name, var] : before)
    if (!fall_env.contains(name)) env_.erase(name);
  for (const auto& [name, var] : fall_env) {
    if (auto it = before.find(name); it != before.end() && it->second == var) continue;
    // A tensor updated in place is still the tensor it was before the if.
    if (auto tensor = TensorBeforeIf(name, fall_env, fall_env, before, aliases, aliases)) {
      env_[name] = tensor;
      continue;
    }
    values.push_back(var);
    results.push_back(std::make_shared<ir::Var>(name, var->type(), span));
    env_[name] = results.back();
  }
  if (!results.empty()) falls.stmts.push_back(std::make_shared<ir::YieldStmt>(values, span));
  return finish(std::move(results));
}

// Names assigned in a branch are merged after the if when both paths give them a value of one type.
// A name nothing after the if reads is not merged: its branches' values die with them (in a loop,
// the loop then need not carry it).
ir::Result<ir::StmtPtr> FunctionParser::FinishImplicitIf(py::handle stmt, const ir::ExprPtr& condition,
                                                         ParsedBody then_body, ParsedBody else_body, bool has_else,
                                                         const Env& then_env, const Env& else_env, const Env& before,
                                                         const ir::Span& span) {
  std::set<std::string> changed;
  for (const Env* env : {&then_env, &else_env})
    for (const auto& [name, var] : *env)
      if (auto it = before.find(name); it == before.end() || it->second != var) changed.insert(name);
  std::vector<ir::ExprPtr> then_values, else_values;
  std::vector<ir::VarPtr> results;
  const ir::TensorAliases then_aliases(Seq(then_body.stmts)), else_aliases(Seq(else_body.stmts));
  for (const auto& name : changed) {
    auto t = then_env.find(name), e = else_env.find(name);
    // A tensor updated in place on either path is still the tensor it was before the if.
    if (auto tensor = TensorBeforeIf(name, then_env, else_env, before, then_aliases, else_aliases)) {
      env_[name] = tensor;
      continue;
    }
    if (t == then_env.end() || e == else_env.end()) {
      const bool in_then = t != then_env.end();
      const ir::Span& at = (in_then ? t : e)->second->span();
      const char* when = !in_then ? "when the if branch runs"
                         : has_else ? "when the else branch runs"
                                    : "when the condition is false";
      MarkUnavailable(name, Unavailable(fmt::format("'{}' is assigned only in the {} branch of the if at line {} "
                                                    "(line {}), so it has no value {}",
                                                    name, in_then ? "if" : "else", span.line, at.line, when),
                                        "assign it in both branches, or before the if"));
      continue;
    }
    if (!ReadAfter(stmt, name)) {
      MarkUnavailable(name, Unavailable(fmt::format("'{}' is assigned in the if at line {} and not merged after it",
                                                    name, span.line),
                                        "assign it before the if and use it after the if under a name of its own"));
      continue;
    }
    ir::TypePtr merged = t->second->type();
    if (!merged->equals(*e->second->type())) merged = WholeTileOfBoth(*merged, *e->second->type());
    if (!merged) merged = WiderIntegerOfBoth(*t->second->type(), *e->second->type());
    if (!merged) {
      MarkUnavailable(name, Unavailable(fmt::format("'{}' has type {} after the if branch but {} after the else "
                                                    "branch of the if at line {}",
                                                    name, t->second->type()->str(), e->second->type()->str(),
                                                    span.line),
                                        "give both branches' values the same shape, dtype and memory space"));
      continue;
    }
    auto then_value = ConvertedForMerge(t->second, merged, then_body.stmts, span);
    auto else_value = ConvertedForMerge(e->second, merged, else_body.stmts, span);
    if (!then_value) return pypto::unexpected(then_value.error());
    if (!else_value) return pypto::unexpected(else_value.error());
    then_values.push_back(*then_value);
    else_values.push_back(*else_value);
    results.push_back(std::make_shared<ir::Var>(name, merged, span));
  }
  for (const auto& var : results) env_[var->name_hint()] = var;
  if (!results.empty()) {
    then_body.stmts.push_back(std::make_shared<ir::YieldStmt>(then_values, span));
    else_body.stmts.push_back(std::make_shared<ir::YieldStmt>(else_values, span));
  }
  ir::StmtPtr else_stmt = has_else || !results.empty() ? Seq(std::move(else_body.stmts)) : nullptr;
  return ir::StmtPtr(std::make_shared<ir::IfStmt>(condition, Seq(std::move(then_body.stmts)), else_stmt,
                                                  std::move(results), span));
}

// The tensor from before an if that `name` means after it, when each path that binds `name` binds it
// to a store into that tensor (`out = pl.store(t, [0, 0], c)`) and any other path leaves it as
// that tensor or unbound (a path that continues its loop). Null otherwise.
// Two tiles that differ only in their valid regions (a product of a narrowed operand in one branch,
// the accumulator in the other) merge as the whole tile: which part is valid depends on the branch.
ir::TypePtr FunctionParser::WholeTileOfBoth(const ir::Type& a, const ir::Type& b) {
  const auto* x = a.As<ir::TileType>();
  const auto* y = b.As<ir::TileType>();
  if (!x || !y || x->shape() != y->shape() || x->dtype() != y->dtype() || x->memory_space() != y->memory_space())
    return nullptr;
  return std::make_shared<ir::TileType>(x->shape(), x->dtype(), x->memory_space(), x->memref());
}

// Two integer scalars of different dtypes (`i = row` with an INT32 row in one branch, `i = BASE +
// row`, an INDEX, in the other) merge as the wider dtype, the first branch's when they are as wide:
// upstream's promotion of integer operands (PromoteSameCategoryDtype), so no branch's value is cut.
ir::TypePtr FunctionParser::WiderIntegerOfBoth(const ir::Type& a, const ir::Type& b) {
  const auto* x = a.As<ir::ScalarType>();
  const auto* y = b.As<ir::ScalarType>();
  if (!x || !y || !ir::IsInteger(x->dtype()) || !ir::IsInteger(y->dtype())) return nullptr;
  return std::make_shared<ir::ScalarType>(ir::DataTypeBits(y->dtype()) > ir::DataTypeBits(x->dtype()) ? y->dtype()
                                                                                                     : x->dtype());
}

// The value a branch yields for a merged name: `value` itself, or, when the merge widened its
// integer dtype, `value` cast to it (scalar.cast, assigned at the end of the branch's `stmts`).
ir::Result<ir::ExprPtr> FunctionParser::ConvertedForMerge(const ir::VarPtr& value, const ir::TypePtr& merged,
                                                          std::vector<ir::StmtPtr>& stmts, const ir::Span& span) {
  const auto* scalar = merged->As<ir::ScalarType>();
  const auto* from = value->type()->As<ir::ScalarType>();
  if (!scalar || !from || from->dtype() == scalar->dtype()) return ir::ExprPtr(value);
  auto cast = ir::OpRegistry::Get().CreateCall("scalar.cast", {value},
                                               {{"target_type", ir::OpAttr(scalar->dtype())}}, span);
  if (!cast) return pypto::unexpected(cast.error());
  auto converted = std::make_shared<ir::Var>(value->name_hint(), merged, span);
  stmts.push_back(std::make_shared<ir::AssignStmt>(converted, *cast, span));
  return ir::ExprPtr(converted);
}

ir::VarPtr FunctionParser::TensorBeforeIf(const std::string& name, const Env& then_env, const Env& else_env,
                                          const Env& before, const ir::TensorAliases& then_aliases,
                                          const ir::TensorAliases& else_aliases) const {
  auto old = before.find(name);
  const ir::Var* old_var = old != before.end() ? old->second.get() : nullptr;
  // The tensor a path leaves `name` as; nullopt on a path that leaves it unbound.
  constexpr const ir::Var* kNotATensor = nullptr;
  auto root = [&](const Env& env, const ir::TensorAliases& aliases) -> std::optional<const ir::Var*> {
    auto it = env.find(name);
    if (it == env.end() || it->second.get() == old_var)
      return old_var ? std::optional(old_var->type()->As<ir::TensorType>() ? InPlaceRoot(old_var, aliases) : old_var)
                     : std::nullopt;
    return it->second->type()->As<ir::TensorType>() ? InPlaceRoot(it->second.get(), aliases) : kNotATensor;
  };
  const auto then_root = root(then_env, then_aliases), else_root = root(else_env, else_aliases);
  const ir::Var* tensor = then_root ? *then_root : *else_root;
  if (!tensor || (then_root && else_root && *then_root != *else_root)) return nullptr;
  // The name before the if, when it named that buffer; else any name that did.
  if (old_var && old_var->type()->As<ir::TensorType>() && InPlaceRoot(old_var, then_aliases) == tensor)
    return old->second;
  for (const auto& [before_name, var] : before)
    if (var.get() == tensor) return var;
  return nullptr;
}

}  // namespace pypto::frontend
