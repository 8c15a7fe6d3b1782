// FunctionParser: what ends a loop or branch body: break / continue, with the values they hand
// on, and a trailing pl.yield_.
#include "function_parser.h"

#include <fmt/format.h>

#include "assigned_names.h"
#include "pypto/ir/functor.h"

namespace pypto::frontend {

using ir::DiagnosticKind;
using ir::MakeError;

// A `pl.range` loop whose body breaks or continues: each jump becomes a BreakStmt / ContinueStmt
// handing on what the loop carries there (CtrlFlowTransform makes the loop structured).
ir::Result<ir::StmtPtr> FunctionParser::ParseLoopWithJumps(py::handle stmt, const LoopHeader& header,
                                                           const LoopControl& control, bool explicit_carries) {
  py::handle jump = control.first_break ? control.first_break : control.first_continue;
  const std::string what = control.first_break ? "break" : "continue";
  if (header.kind != ir::ForKind::Sequential)
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("'{}' is allowed in pl.range loops only; the iterations of a {} loop do not run "
                                 "one after another",
                                 what, header.kind == ir::ForKind::Parallel ? "pl.parallel" : "pl.unroll/pl.pipeline"),
                     map_.SpanOf(jump), "use pl.range for a loop that leaves early");
  if (explicit_carries)
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("'{}' in a loop with init_values is not supported", what), map_.SpanOf(jump),
                     "carry the values implicitly: assign them before the loop and reassign them in its body");
  if (control.first_break && kernel_depth_ == 0)
    return MakeError(DiagnosticKind::InvalidOperation,
                     "'break' is supported in kernel loops only: an orchestration loop submits its tasks before "
                     "any of them runs",
                     map_.SpanOf(jump), "move the loop into a pl.at scope, or compute the trip count up front");
  jump_scopes_.push_back(JumpScope{.loop = stmt, .control = control, .parsed = {}});
  auto parsed = kernel_depth_ == 0 ? ParseOrchestrationLoop(stmt, header) : ParseKernelLoop(stmt, header);
  jump_scopes_.pop_back();
  return parsed;
}

// `break` / `continue` of the loop whose jumps are being parsed. What it hands on is filled in
// once the loop knows what it carries (FillJumps), from the names' values here.
ir::Result<ir::StmtPtr> FunctionParser::ParseJump(py::handle stmt, bool is_break) {
  ir::StmtPtr jump = MakeJump(is_break, {}, map_.SpanOf(stmt));
  jump_scopes_.back().parsed.emplace_back(jump, env_);
  return jump;
}

bool FunctionParser::IsExplicitJump(py::handle value) {
  if (!IsNode(value, "Call")) return false;
  const std::string callee = DottedName(value.attr("func"));
  return callee == "pl.break_" || callee == "pl.continue_";
}

// `pl.break_(v, ...)` / `pl.continue_(v, ...)`, as the printer writes a jump in a loop with
// init_values: one value per carried value.
ir::Result<ir::StmtPtr> FunctionParser::ParseExplicitJump(py::handle call, const ir::Span& span) {
  const bool is_break = DottedName(call.attr("func")) == "pl.break_";
  const char* what = is_break ? "pl.break_" : "pl.continue_";
  if (explicit_carries_.empty())
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("{}(...) hands on the carried values of a loop with init_values, and is used "
                                 "outside one",
                                 what),
                     span, is_break ? "write `break`" : "write `continue`");
  std::vector<ir::ExprPtr> values;
  for (auto arg : call.attr("args")) {
    if (IsNode(arg, "Name"))  // a variable even when its value is a known constant, as in pl.yield_
      if (auto it = env_.find(arg.attr("id").cast<std::string>()); it != env_.end()) {
        values.push_back(it->second);
        continue;
      }
    auto value = ParseExpr(arg);
    if (!value) return pypto::unexpected(value.error());
    values.push_back(*value);
  }
  if (values.size() != explicit_carries_.back() || py::len(call.attr("keywords")) > 0)
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("{} takes one positional value per carried value of its loop ({}), got {}", what,
                                 explicit_carries_.back(), values.size()),
                     span);
  return MakeJump(is_break, std::move(values), span);
}

// A break (`is_break`) or a continue handing on `values`.
ir::StmtPtr FunctionParser::MakeJump(bool is_break, std::vector<ir::ExprPtr> values, const ir::Span& span) {
  if (is_break) return std::make_shared<ir::BreakStmt>(std::move(values), span);
  return std::make_shared<ir::ContinueStmt>(std::move(values), span);
}

// Gives each jump of the loop being parsed what the loop carries on at it: the values that the
// names of its carried values (`kept`) had at the jump. `stmts`: the parsed body.
ir::Result<std::vector<ir::StmtPtr>> FunctionParser::FillJumps(
    const std::vector<ir::IterArg>& kept, const std::unordered_map<const ir::Var*, ir::VarPtr>& uncarried,
    const std::vector<ir::StmtPtr>& stmts) {
  std::unordered_map<const ir::Stmt*, ir::StmtPtr> filled;
  for (const auto& [jump, env] : jump_scopes_.back().parsed) {
    const bool is_break = jump->Is<ir::BreakStmt>();
    std::vector<ir::ExprPtr> values;
    for (const auto& iter_arg : kept) {
      const std::string& name = iter_arg.var->name_hint();
      auto it = env.find(name);
      if (it == env.end())
        return MakeError(DiagnosticKind::UndefinedName,
                         fmt::format("'{}' is carried by the loop but has no value at this '{}'", name,
                                     is_break ? "break" : "continue"),
                         jump->span(), "give it a value on every path that reaches the jump");
      if (auto checked = CheckCarriedType(name, iter_arg.var->type(), it->second, jump->span()); !checked)
        return pypto::unexpected(checked.error());
      values.push_back(it->second);
    }
    ir::StmtPtr with_values = MakeJump(is_break, std::move(values), jump->span());
    filled[jump.get()] = uncarried.empty() ? with_values : ir::SubstituteVars(with_values, uncarried);
  }
  auto body = RewriteOwnJumps(Seq(stmts), [&](const ir::JumpStmt& jump) -> ir::StmtPtr {
    auto it = filled.find(&jump);
    return it == filled.end() ? nullptr : it->second;
  });
  return ir::FlattenStmts(body);
}

// A loop or branch body; a trailing pl.yield_ is returned apart from the other statements.
ir::Result<FunctionParser::ParsedBody> FunctionParser::ParseBody(py::handle statements) {
  ParsedBody body;
  py::list list = py::reinterpret_borrow<py::list>(statements);
  for (size_t i = 0; i < py::len(list); ++i) {
    py::handle stmt = list[i];
    py::handle value = py::hasattr(stmt, "value") ? stmt.attr("value") : py::handle();
    if (i + 1 == py::len(list) && value && IsYieldCall(value)) {
      auto yield = ParseYield(stmt);
      if (!yield) return pypto::unexpected(yield.error());
      body.yield = std::move(*yield);
      break;
    }
    auto parsed = ParseStatement(stmt);
    if (!parsed) return pypto::unexpected(parsed.error());
    Append(body.stmts, *parsed);
  }
  return body;
}

ir::Result<FunctionParser::ParsedYield> FunctionParser::ParseYield(py::handle stmt) {
  ParsedYield yield{.span = map_.SpanOf(stmt)};
  py::handle call = stmt.attr("value");
  if (py::len(call.attr("keywords")) > 0)
    return MakeError(DiagnosticKind::Syntax, "pl.yield_ takes only positional values", yield.span);
  for (auto arg : call.attr("args")) {
    // A name yields its variable even when its value is a known constant, as the yields the parser
    // makes for reassigned names do: `r = pl.yield_(v)` prints and parses back to the same IR.
    if (IsNode(arg, "Name"))
      if (auto it = env_.find(arg.attr("id").cast<std::string>()); it != env_.end()) {
        yield.values.push_back(it->second);
        continue;
      }
    auto value = ParseExpr(arg);
    if (!value) return pypto::unexpected(value.error());
    yield.values.push_back(*value);
  }
  std::vector<py::handle> targets;
  if (IsNode(stmt, "AnnAssign")) {
    targets.push_back(stmt.attr("target"));
    yield.annotation = stmt.attr("annotation");
  } else if (IsNode(stmt, "Assign")) {
    py::handle target = py::list(stmt.attr("targets"))[0];
    if (IsNode(target, "Tuple")) {
      for (auto element : target.attr("elts")) targets.push_back(element);
    } else {
      targets.push_back(target);
    }
  }
  for (auto target : targets) {
    if (!IsNode(target, "Name"))
      return MakeError(DiagnosticKind::Syntax, "pl.yield_ assigns plain names", map_.SpanOf(target));
    yield.targets.push_back(target.attr("id").cast<std::string>());
  }
  if (!yield.targets.empty() && yield.targets.size() != yield.values.size())
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("pl.yield_ of {} values assigned to {} names", yield.values.size(),
                                 yield.targets.size()),
                     yield.span);
  return yield;
}

// The variables a yield assigns, typed by their annotation in a @pl.program, else by the values.
ir::Result<std::vector<ir::VarPtr>> FunctionParser::YieldResults(const ParsedYield& yield) {
  std::vector<ir::VarPtr> results;
  for (size_t i = 0; i < yield.targets.size(); ++i) {
    ir::TypePtr type = yield.values[i]->type();
    if (yield.annotation && source_.signature) {
      auto declared = ResolveType(yield.annotation, map_, source_.constants, &expr_resolver_);
      if (!declared) return pypto::unexpected(declared.error());
      if (!Assignable(*declared, type))
        return MakeError(DiagnosticKind::Type,
                         fmt::format("'{}' is declared {} but the value yielded is {}", yield.targets[i],
                                     (*declared)->str(), type->str()),
                         map_.SpanOf(yield.annotation));
      type = *declared;
    }
    results.push_back(std::make_shared<ir::Var>(yield.targets[i], type, yield.span));
  }
  return results;
}

// Whether `var` is read anywhere in `stmts`.
bool FunctionParser::Reads(const std::vector<ir::StmtPtr>& stmts, const ir::Var* var) {
  struct Finder final : ir::IRVisitor {
    const ir::Var* target;
    bool found = false;
    void VisitVar(const std::shared_ptr<const ir::Var>& v) override { found |= v.get() == target; }
  } finder;
  finder.target = var;
  for (const auto& stmt : stmts) finder.VisitStmt(stmt);
  return finder.found;
}

}  // namespace pypto::frontend
