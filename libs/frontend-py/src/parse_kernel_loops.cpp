// FunctionParser: loops inside kernels, which carry the names their bodies reassign: for loops,
// while loops and pl.while_.
#include "function_parser.h"

#include <fmt/format.h>

#include <algorithm>

#include "assigned_names.h"
#include "op_resolver.h"
#include "pypto/ir/functor.h"
#include "pypto/ir/tensor_aliases.h"

namespace pypto::frontend {

using ir::DiagnosticKind;
using ir::MakeError;

// ---- while loops -------------------------------------------------------------------------------
// `while cond:` in a kernel carries the names it reassigns like a for loop does, and its condition
// reads them; `for (a, b) in pl.while_(init_values=(x, y)):` opening with `pl.cond(cond)` and ending
// with `ra, rb = pl.yield_(...)` names them explicitly (what the printer writes). Orchestration code
// has no while loops: the task plan needs each loop's trip count.

ir::Result<ir::StmtPtr> FunctionParser::ParseWhile(py::handle stmt) {
  const ir::Span span = map_.SpanOf(stmt);
  if (auto refused = RefuseWhile(stmt)) return pypto::unexpected(*refused);
  return ParseKernelLoop(stmt, LoopHeader{.span = span, .condition = stmt.attr("test")});
}

std::optional<ir::Diagnostic> FunctionParser::RefuseWhile(py::handle stmt) const {
  const ir::Span span = map_.SpanOf(stmt);
  if (kernel_depth_ == 0)
    return MakeError(DiagnosticKind::Syntax, "while loops are supported inside kernels only", span,
                     "orchestration loops need a trip count: use pl.range(...), or move the loop into a pl.at "
                     "scope or an InCore function")
        .error();
  if (py::len(stmt.attr("orelse")) > 0)
    return MakeError(DiagnosticKind::Syntax, "'while ... else' is not supported in kernels", span).error();
  return std::nullopt;
}

// The condition of a while loop (parsed where the carried values are bound); null for a for loop.
ir::Result<ir::ExprPtr> FunctionParser::WhileCondition(const LoopHeader& header) {
  if (!header.condition) return ir::ExprPtr{};
  auto condition = ParseExpr(header.condition);
  if (!condition) return condition;
  if (!(*condition)->type()->As<ir::ScalarType>())
    return MakeError(DiagnosticKind::Type,
                     fmt::format("the while condition must be a scalar, got {}", (*condition)->type()->str()),
                     map_.SpanOf(header.condition));
  return condition;
}

// `for (a, b) in pl.while_(init_values=(x, y)):` / `pl.cond(c)` / ... / `ra, rb = pl.yield_(...)`.
ir::Result<ir::StmtPtr> FunctionParser::ParseExplicitWhile(py::handle stmt) {
  const ir::Span span = map_.SpanOf(stmt);
  if (auto refused = RefuseWhile(stmt)) return pypto::unexpected(*refused);
  py::handle call = stmt.attr("iter");
  py::handle init_values;
  for (auto keyword : call.attr("keywords"))
    if (!keyword.attr("arg").is_none() && keyword.attr("arg").cast<std::string>() == "init_values")
      init_values = keyword.attr("value");
  if (py::len(call.attr("args")) > 0 || py::len(call.attr("keywords")) != 1 || !init_values)
    return MakeError(DiagnosticKind::Syntax, "pl.while_ takes only init_values=(...)", map_.SpanOf(call),
                     "write `for (a, b) in pl.while_(init_values=(x, y)):`");
  py::list body = stmt.attr("body");
  py::handle first = body[0];
  if (!IsNode(first, "Expr") || !IsNode(first.attr("value"), "Call") ||
      DottedName(first.attr("value").attr("func")) != "pl.cond")
    return MakeError(DiagnosticKind::Syntax, "the first statement of a pl.while_ loop must be pl.cond(<condition>)",
                     map_.SpanOf(first), "the loop runs while the condition holds: `pl.cond(i < n)`");
  py::handle cond_call = first.attr("value");
  if (py::len(cond_call.attr("args")) != 1 || py::len(cond_call.attr("keywords")) > 0)
    return MakeError(DiagnosticKind::Syntax, "pl.cond takes one condition", map_.SpanOf(cond_call));
  auto iter_args = ExplicitIterArgs(stmt.attr("target"), init_values);
  if (!iter_args) return pypto::unexpected(iter_args.error());

  auto outer = env_;
  for (const auto& iter_arg : *iter_args) env_[iter_arg.var->name_hint()] = iter_arg.var;
  auto condition = WhileCondition(LoopHeader{.condition = py::list(cond_call.attr("args"))[0]});
  py::list rest;
  for (size_t i = 1; i < py::len(body); ++i) rest.append(body[i]);
  auto parsed = condition ? ParseBody(rest) : pypto::unexpected(condition.error());
  env_ = std::move(outer);
  if (!parsed) return pypto::unexpected(parsed.error());
  auto results = ExplicitResults(*iter_args, *parsed, span);
  if (!results) return pypto::unexpected(results.error());
  return ir::StmtPtr(std::make_shared<ir::WhileStmt>(*condition, std::move(*iter_args),
                                                     Seq(std::move(parsed->stmts)), std::move(*results), span));
}

// A kernel loop: names assigned before it and reassigned in its body are carried.
ir::Result<ir::StmtPtr> FunctionParser::ParseKernelLoop(py::handle stmt, const LoopHeader& header) {
  std::vector<ir::StmtPtr> prologue;
  auto loop = ParseCarryingLoop(stmt, header, prologue);
  // A value first assigned in the body and read by a later iteration (`if k == 0: acc = ...
  // else: acc = f(acc)`) starts as a fresh tile of the type the body gives it.
  for (int retry = 0; !loop && retry < 8; ++retry) {
    if (RetypePlaceholders(stmt, header, prologue)) {
      loop = ParseCarryingLoop(stmt, header, prologue);
      continue;
    }
    const auto& error = loop.error();
    auto type = assigned_types_.find(undefined_name_);
    if (error.kind != DiagnosticKind::UndefinedName || type == assigned_types_.end() ||
        !type->second->As<ir::TileType>() || env_.contains(undefined_name_))
      break;
    auto names = AssignedNames(stmt.attr("body"));
    if (std::find(names.begin(), names.end(), undefined_name_) == names.end()) break;
    auto fresh = FreshTile(undefined_name_, *type->second->As<ir::TileType>(), header.span);
    if (!fresh) return pypto::unexpected(fresh.error());
    prologue.push_back(*fresh);
    loop = ParseCarryingLoop(stmt, header, prologue);
  }
  if (!loop) return loop;
  if (prologue.empty()) return loop;
  prologue.push_back(*loop);
  return Seq(std::move(prologue), header.span);
}

bool FunctionParser::IsCreation(const ir::Expr& value) {
  const auto* call = value.As<ir::Call>();
  return call && call->is_op_call() && (call->op()->name == "tensor.create" || call->op()->name == "tile.create");
}

// `acc = pl.create_tensor(...)` before a loop whose body makes `acc` a tile of another kind
// (`acc = pl.matmul(...)`: an Acc tile): the placeholder's contents were never written, so the loop
// carries a fresh tile of the body's type instead. True if some name was retyped (parse again).
bool FunctionParser::RetypePlaceholders(py::handle stmt, const LoopHeader& header, std::vector<ir::StmtPtr>& prologue) {
  bool retyped = false;
  for (const auto& name : AssignedNames(stmt.attr("body"))) {
    auto current = env_.find(name);
    auto assigned = assigned_types_.find(name);
    if (current == env_.end() || assigned == assigned_types_.end() || !placeholders_.contains(current->second->id()))
      continue;
    const auto* tile = assigned->second->As<ir::TileType>();
    if (!tile || current->second->type()->equals(*assigned->second)) continue;
    auto fresh = FreshTile(name, *tile, header.span);
    if (!fresh) continue;
    prologue.push_back(*fresh);
    retyped = true;
  }
  return retyped;
}

// `name = pl.tile.create(shape, dtype=..., target_memory=...)`, bound in the environment.
ir::Result<ir::StmtPtr> FunctionParser::FreshTile(const std::string& name, const ir::TileType& tile,
                                                  const ir::Span& span) {
  auto call = CreateTileLike(tile, span);
  if (!call) return pypto::unexpected(call.error());
  auto var = std::make_shared<ir::Var>(name, (*call)->type(), span);
  env_[name] = var;
  return ir::StmtPtr(std::make_shared<ir::AssignStmt>(var, *call, span));
}

// The names a loop body may carry: those it assigns, the arrays whose elements it assigns
// (`tids[i] = t`), the tiles it writes a window of (`t[i : i + 1, :] = u`; a tensor `y[...] = tile`,
// or in a kernel a slice orchestration code took, is stored into in place) and the tiles it writes
// an element of (`pl.write(tile, [i], v)`; a tensor written so keeps its name).
std::vector<std::string> FunctionParser::CarryCandidates(py::handle body) const {
  auto names = AssignedNames(body);
  for (auto& name : ElementWrittenNames(body)) {  // `pl.write(tile, ...)` rebinds the tile's name
    auto it = env_.find(name);
    const bool tile = it != env_.end() && it->second->type()->As<ir::TileType>();
    if (tile && std::find(names.begin(), names.end(), name) == names.end()) names.push_back(std::move(name));
  }
  for (auto& name : SubscriptAssignedNames(body)) {
    auto it = env_.find(name);
    // An orchestration slice written in a kernel is written through to its tensor, not rebound.
    const bool through = it != env_.end() && kernel_depth_ > 0 && orchestration_slices_.contains(it->second.get());
    const bool rebound = it != env_.end() && !through &&
                         (it->second->type()->As<ir::ArrayType>() || it->second->type()->As<ir::TileType>());
    if (rebound && std::find(names.begin(), names.end(), name) == names.end()) names.push_back(std::move(name));
  }
  return names;
}

ir::Result<ir::StmtPtr> FunctionParser::ParseCarryingLoop(py::handle stmt, const LoopHeader& header,
                                                          const std::vector<ir::StmtPtr>& /*prologue*/) {
  const std::string loop_name = header.loop_var ? header.loop_var->name_hint() : "";
  const bool owns_jumps = !jump_scopes_.empty() && jump_scopes_.back().loop.ptr() == stmt.ptr();
  if (owns_jumps) jump_scopes_.back().parsed.clear();  // a retried parse records its jumps again
  auto outer = env_;
  std::vector<std::string> carried;
  std::vector<ir::IterArg> iter_args;
  for (const auto& name : CarryCandidates(stmt.attr("body"))) {
    auto it = env_.find(name);
    if (name == loop_name || it == env_.end()) continue;
    carried.push_back(name);
    iter_args.push_back(ir::IterArg{std::make_shared<ir::Var>(name, it->second->type(), header.span), it->second});
  }
  if (header.loop_var) env_[loop_name] = header.loop_var;
  for (const auto& iter_arg : iter_args) env_[iter_arg.var->name_hint()] = iter_arg.var;
  auto condition = WhileCondition(header);
  if (!condition) {
    env_ = std::move(outer);
    return pypto::unexpected(condition.error());
  }
  auto body = ParseBlock(stmt.attr("body"));
  if (!body) {
    env_ = std::move(outer);
    return body;
  }
  // A tensor the body only updates in place is the same buffer in every iteration: the loop does
  // not carry it, and after the loop the name means the tensor it meant before.
  std::optional<ir::TensorAliases> aliases;
  std::unordered_map<const ir::Var*, ir::VarPtr> uncarried;
  std::vector<bool> in_place(carried.size(), false);
  for (size_t i = 0; i < carried.size(); ++i) {
    auto value = env_.find(carried[i]);
    if (value == env_.end() || !iter_args[i].var->type()->As<ir::TensorType>()) continue;
    if (!aliases) aliases.emplace(*body);
    if (!IsInPlaceUpdateOf(value->second.get(), iter_args[i].var.get(), *aliases)) continue;
    in_place[i] = true;
    uncarried[iter_args[i].var.get()] = outer.at(carried[i]);
  }
  auto stmts = ir::FlattenStmts(uncarried.empty() ? *body : ir::SubstituteVars(*body, uncarried));
  // What the loop reads of its carried values: its body and, in a while loop, its condition.
  auto read_scope = stmts;
  if (*condition) read_scope.push_back(std::make_shared<ir::EvalStmt>(*condition));
  std::vector<ir::IterArg> kept;
  std::vector<ir::ExprPtr> yielded;
  std::vector<ir::VarPtr> results;
  std::map<std::string, ir::Diagnostic> unavailable;
  for (size_t i = 0; i < carried.size(); ++i) {
    auto value = env_.find(carried[i]);
    if (in_place[i]) continue;  // the tensor it was before
    if (value == env_.end()) {  // unavailable after the body: so after the loop, not what it was before it
      unavailable.emplace(carried[i], NoValueAfterLoop(carried[i], header.span));
      continue;
    }
    const auto& iter_arg = iter_args[i];
    // `n0 = ...` in a kernel scope, then `for ...: n0 = ...` in a later one: the body never reads
    // the earlier kernel's value, so the loop does not carry it in (it could not: that value
    // stays on the other kernel's core).
    if (kernel_values_.contains(outer.at(carried[i])) && !Reads(read_scope, iter_arg.var.get())) {
      unavailable.emplace(carried[i], Unavailable(fmt::format("'{}' is assigned in the loop at line {}, and before "
                                                              "it only inside an earlier kernel scope, so it has "
                                                              "no value after the loop",
                                                              carried[i], header.span.line),
                                                  "give the value inside the loop a name of its own"));
      continue;
    }
    if (!iter_arg.var->type()->equals(*value->second->type())) {
      // Reassigned with another type and never read across iterations: not carried, just not
      // usable after the loop.
      if (Reads(read_scope, iter_arg.var.get()))
        return pypto::unexpected(
            CheckCarriedType(carried[i], iter_arg.var->type(), value->second, value->second->span()).error());
      unavailable.emplace(carried[i], Unavailable(fmt::format("'{}' changes type inside the loop at line {} ({} to "
                                                              "{}), so it has no single type after the loop",
                                                              carried[i], header.span.line,
                                                              iter_arg.var->type()->str(),
                                                              value->second->type()->str()),
                                                  "give the value inside the loop a name of its own"));
      continue;
    }
    // Rebound before any read in every iteration, and read nowhere after the loop: the value one
    // iteration leaves is never used, so the loop does not carry it.
    if (!Reads(read_scope, iter_arg.var.get()) && !ReadAfter(stmt, carried[i])) {
      unavailable.emplace(carried[i], NoValueAfterLoop(carried[i], header.span));
      continue;
    }
    kept.push_back(iter_arg);
    yielded.push_back(value->second);
    results.push_back(std::make_shared<ir::Var>(carried[i], iter_arg.var->type(), header.span));
  }
  if (owns_jumps) {
    auto filled = FillJumps(kept, uncarried, stmts);
    if (!filled) return pypto::unexpected(filled.error());
    stmts = std::move(*filled);
  }
  auto stored_into = TensorsStoredInto(stmt.attr("body"), outer, *body, uncarried);
  env_ = std::move(outer);
  for (const auto& var : results) env_[var->name_hint()] = var;
  for (auto& [name, tensor] : stored_into) env_[name] = tensor;
  for (auto& [name, diagnostic] : unavailable) MarkUnavailable(name, diagnostic);
  if (!kept.empty()) stmts.push_back(std::make_shared<ir::YieldStmt>(yielded, header.span));
  if (*condition)
    return ir::StmtPtr(std::make_shared<ir::WhileStmt>(*condition, std::move(kept), Seq(std::move(stmts)),
                                                     std::move(results), header.span));
  return ir::StmtPtr(std::make_shared<ir::ForStmt>(header.loop_var, header.start, header.stop, header.step,
                                                   std::move(kept), Seq(std::move(stmts)), std::move(results),
                                                   header.kind, header.span));
}

// Why a name the loop body rebinds is not readable after the loop (reported only if it is read).
ir::Diagnostic FunctionParser::NoValueAfterLoop(const std::string& name, const ir::Span& loop) const {
  if (auto it = unavailable_.find(name); it != unavailable_.end()) return it->second;
  return Unavailable(fmt::format("'{}' is rebound in the loop at line {} and not carried out of it", name, loop.line),
                     "assign it before the loop and use it after the loop under a name of its own");
}

// The names first bound in a loop body to a store into a tensor named before the loop (`out =
// pl.store(t, [i, 0], c)`): after the loop each means that tensor, as in Python, where it holds the
// last iteration's value, which is the same buffer. `uncarried` maps a tensor the loop stopped
// carrying to the one before it.
std::vector<std::pair<std::string, ir::VarPtr>> FunctionParser::TensorsStoredInto(
    py::handle body_statements, const std::unordered_map<std::string, ir::VarPtr>& outer, const ir::StmtPtr& body,
    const std::unordered_map<const ir::Var*, ir::VarPtr>& uncarried) const {
  std::vector<std::pair<std::string, ir::VarPtr>> stored;
  std::optional<ir::TensorAliases> aliases;
  for (const auto& name : AssignedNames(body_statements)) {
    auto value = env_.find(name);
    if (outer.contains(name) || value == env_.end() || !value->second->type()->As<ir::TensorType>()) continue;
    if (!aliases) aliases.emplace(body);
    const ir::Var* root = aliases->Root(value->second.get());
    if (auto it = uncarried.find(root); it != uncarried.end()) root = it->second.get();
    for (const auto& [outer_name, var] : outer)
      if (var.get() == root) {
        stored.emplace_back(name, var);
        break;
      }
  }
  return stored;
}

}  // namespace pypto::frontend
