// FunctionParser: `for` loops: the pl.range family's header, loops in orchestration code, and loops
// (for and pl.while_) whose carried values are named explicitly (init_values=).
#include "function_parser.h"

#include <fmt/format.h>

#include "pypto/ir/functor.h"
#include "pypto/ir/tensor_aliases.h"

namespace pypto::frontend {

using ir::DiagnosticKind;
using ir::MakeError;

// `for i in pl.range([start,] stop[, step]):` and the pl.parallel / pl.unroll / pl.pipeline forms.
ir::Result<ir::StmtPtr> FunctionParser::ParseFor(py::handle stmt) {
  ir::Span span = map_.SpanOf(stmt);
  py::handle target = stmt.attr("target"), iter = stmt.attr("iter");
  if (IsNode(iter, "Call") && DottedName(iter.attr("func")) == "pl.while_") return ParseExplicitWhile(stmt);
  // `for i, (a, b) in pl.range(n, init_values=(x, y)):` names the carried values explicitly.
  py::handle carried_target;
  if (IsNode(target, "Tuple") && py::len(target.attr("elts")) == 2) {
    carried_target = py::list(target.attr("elts"))[1];
    target = py::list(target.attr("elts"))[0];
  }
  if (!IsNode(target, "Name"))
    return MakeError(DiagnosticKind::Syntax, "the loop variable must be a plain name", map_.SpanOf(target));
  if (py::len(stmt.attr("orelse")) > 0)
    return MakeError(DiagnosticKind::Syntax, "'for ... else' is not supported in kernels", span);
  static const std::map<std::string, ir::ForKind> kLoops = {{"pl.range", ir::ForKind::Sequential},
                                                            {"pl.parallel", ir::ForKind::Parallel},
                                                            {"pl.unroll", ir::ForKind::Unroll},
                                                            {"pl.pipeline", ir::ForKind::Pipeline}};
  std::string callee = IsNode(iter, "Call") ? DottedName(iter.attr("func")) : "";
  if (callee == "pl.spmd") return ParseSpmdLoop(stmt, target, iter);
  if (callee == "pl.split_aiv") return ParseSplitAivRegion(stmt, target, iter);
  auto kind = kLoops.find(callee);
  if (kind == kLoops.end())
    return MakeError(DiagnosticKind::Syntax, "kernel loops iterate over pl.range(...), pl.parallel(...), "
                     "pl.unroll(...) or pl.pipeline(...)", map_.SpanOf(iter));
  py::handle init_values, carry_kinds;
  for (auto keyword : iter.attr("keywords")) {
    std::string key = keyword.attr("arg").is_none() ? "**" : keyword.attr("arg").cast<std::string>();
    if (key == "init_values") {
      init_values = keyword.attr("value");
      continue;
    }
    if (key == "carry") {  // how each value is carried, as ClassifyIterArgCarry printed it
      carry_kinds = keyword.attr("value");
      continue;
    }
    if (!(kind->second == ir::ForKind::Pipeline && key == "stage"))
      return MakeError(DiagnosticKind::Syntax, fmt::format("{}(..., {}=...) is not supported yet", callee, key),
                       map_.SpanOf(keyword));
  }
  std::vector<ir::ExprPtr> bounds;
  for (auto arg : iter.attr("args")) {
    auto bound = ParseExpr(arg);
    if (!bound) return pypto::unexpected(bound.error());
    const auto* scalar = (*bound)->type()->As<ir::ScalarType>();
    if (!scalar || !ir::IsInteger(scalar->dtype()))
      return MakeError(DiagnosticKind::Type, fmt::format("{} bounds must be integers", callee), map_.SpanOf(arg));
    bounds.push_back(*bound);
  }
  if (bounds.empty() || bounds.size() > 3)
    return MakeError(DiagnosticKind::Syntax, fmt::format("{} takes 1 to 3 arguments", callee), map_.SpanOf(iter));
  auto index = [&](int64_t v) { return std::make_shared<ir::ConstInt>(v, ir::DataType::INDEX, span); };
  ir::ExprPtr start = bounds.size() == 1 ? index(0) : bounds[0];
  ir::ExprPtr stop = bounds.size() == 1 ? bounds[0] : bounds[1];
  ir::ExprPtr step = bounds.size() == 3 ? bounds[2] : index(1);
  if (ir::AsConstInt(step) == 0) return MakeError(DiagnosticKind::InvalidOperation, "loop step cannot be zero", span);

  LoopHeader header{.kind = kind->second, .start = start, .stop = stop, .step = step, .span = span};
  header.loop_var = std::make_shared<ir::Var>(target.attr("id").cast<std::string>(),
                                              std::make_shared<ir::ScalarType>(ir::DataType::INDEX),
                                              map_.SpanOf(target));
  program_.loop_ranges[header.loop_var->id()] = LoopRange{start, stop, step};
  if (carry_kinds && !init_values)
    return MakeError(DiagnosticKind::Syntax, fmt::format("{}(..., carry=...) needs init_values", callee),
                     map_.SpanOf(carry_kinds));
  if (const LoopControl control = FindLoopControl(stmt.attr("body")); control.any())
    return ParseLoopWithJumps(stmt, header, control, carried_target || init_values);
  if (carried_target || init_values)
    return ParseExplicitLoop(stmt, header, carried_target, init_values, carry_kinds);
  if (kernel_depth_ == 0) return ParseOrchestrationLoop(stmt, header);
  return ParseKernelLoop(stmt, header);
}

// Outside kernels, loops carry scalars, TaskIds and tensors. A tensor whose new value is the same
// tensor updated in place by a kernel scope (`t = pl.assemble(t, ...)`) is not carried: every
// iteration writes into that one buffer, and after the loop the name still means it. A tensor the
// body reads and then rebinds to another buffer (`current = next`) is carried (ClassifyIterArgCarry
// makes it a Rebind carry).
ir::Result<ir::StmtPtr> FunctionParser::ParseOrchestrationLoop(py::handle stmt, const LoopHeader& header) {
  // A TaskId reassigned in the body (`prev = t` chaining launches), a TaskId array it updates
  // (`tids[i] = t`) and a scalar it recomputes (`max_bn = pl.max(max_bn, n)`) are carried to the
  // next iteration. A tensor may be updated in place alongside (checked once the body is parsed).
  bool carries_value = false, carries_other = false;
  for (const auto& name : CarryCandidates(stmt.attr("body"))) {
    auto it = env_.find(name);
    if (name == header.loop_var->name_hint() || it == env_.end()) continue;
    const ir::Type& type = *it->second->type();
    if (type.As<ir::TensorType>()) continue;
    (IsOrchestrationCarry(type) ? carries_value : carries_other) = true;
  }
  if (carries_value && !carries_other) return CheckOrchestrationCarries(ParseCarryingLoop(stmt, header, {}));
  auto outer = env_;
  env_[header.loop_var->name_hint()] = header.loop_var;
  auto body = ParseBlock(stmt.attr("body"));
  if (!body) return pypto::unexpected(body.error());
  std::optional<ir::TensorAliases> aliases;
  std::vector<std::string> rebound;
  const ir::Var* carried = nullptr;  // the value the loop would carry, a non-TaskId one first
  for (const auto& [var_name, var] : outer) {
    auto it = env_.find(var_name);
    if (var_name == header.loop_var->name_hint() || it == env_.end() || it->second == var) continue;
    if (!aliases) aliases.emplace(*body);
    if (IsInPlaceUpdateOf(it->second.get(), var.get(), *aliases)) continue;
    // A tensor rebound before the body reads it (`buf = pl.create_tensor(...)` first thing in each
    // iteration): nothing crosses iterations; after the loop the name has no single value. (Not a
    // scalar: a constant one is read as its value, so the body may use it without reading it.)
    if (var->type()->As<ir::TensorType>() && !Reads(ir::FlattenStmts(*body), var.get())) {
      rebound.push_back(var_name);
      continue;
    }
    // Report the value that cannot be carried (a tensor) over one that could.
    if (!carried || (!IsOrchestrationCarry(*var->type()) && IsOrchestrationCarry(*carried->type())))
      carried = it->second.get();
  }
  if (carried && carried->type()->As<ir::TensorType>()) {  // parsed again, carrying it
    env_ = std::move(outer);
    return CheckOrchestrationCarries(ParseCarryingLoop(stmt, header, {}));
  }
  if (carried) return RefuseOrchestrationCarry(*carried, carried->span());
  env_ = std::move(outer);
  for (const auto& name : rebound)
    MarkUnavailable(name, Unavailable(fmt::format("'{}' is reassigned in each iteration of the orchestration loop "
                                                  "at line {}, so it has no single value after the loop",
                                                  name, header.span.line),
                                      "give the loop's value a name of its own"));
  return ir::StmtPtr(std::make_shared<ir::ForStmt>(header.loop_var, header.start, header.stop, header.step, *body,
                                                   header.kind, header.span));
}

bool FunctionParser::IsOrchestrationCarry(const ir::Type& type) {
  return ir::IsTaskId(type) || ir::IsTaskIdArray(type) || type.As<ir::ScalarType>();
}

ir::Result<ir::StmtPtr> FunctionParser::RefuseOrchestrationCarry(const ir::Var& var, const ir::Span& span) {
  return MakeError(DiagnosticKind::Syntax,
                   fmt::format("'{}' ({}) is reassigned inside the loop; orchestration loops carry scalars, TaskIds, "
                               "TaskId arrays and tensors; other loop-carried values are supported inside kernels "
                               "(pl.at scopes) only",
                               var.name_hint(), var.type()->str()),
                   span);
}

// An orchestration loop carries scalars, TaskIds, TaskId arrays and tensors, nothing else.
ir::Result<ir::StmtPtr> FunctionParser::CheckOrchestrationCarries(ir::Result<ir::StmtPtr> loop) {
  if (!loop) return loop;
  const auto* parsed = (*loop)->As<ir::ForStmt>();
  if (!parsed || parsed->iter_args().empty()) return loop;
  const auto* yield = ir::FlattenStmts(parsed->body()).back()->As<ir::YieldStmt>();
  for (size_t i = 0; i < parsed->iter_args().size(); ++i) {
    const auto& var = parsed->iter_args()[i].var;
    if (IsOrchestrationCarry(*var->type()) || var->type()->As<ir::TensorType>()) continue;
    return RefuseOrchestrationCarry(*var,
                                    yield && i < yield->values().size() ? yield->values()[i]->span() : parsed->span());
  }
  return loop;
}

// `for i, (a, b) in pl.range(n, init_values=(x, y)):` ending with `ra, rb = pl.yield_(...)`.
ir::Result<ir::StmtPtr> FunctionParser::ParseExplicitLoop(py::handle stmt, const LoopHeader& header,
                                                          py::handle carried_target, py::handle init_values,
                                                          py::handle carry_kinds) {
  if (!carried_target || !init_values || !IsNode(carried_target, "Tuple") ||
      !(IsNode(init_values, "Tuple") || IsNode(init_values, "List")))
    return MakeError(DiagnosticKind::Syntax,
                     "carried values are written `for i, (a, b) in pl.range(n, init_values=(x, y)):`",
                     header.span);
  auto iter_args = ExplicitIterArgs(carried_target, init_values);
  if (!iter_args) return pypto::unexpected(iter_args.error());
  if (carry_kinds)
    if (auto ok = ReadCarryKinds(carry_kinds, *iter_args); !ok) return pypto::unexpected(ok.error());
  auto outer = env_;
  env_[header.loop_var->name_hint()] = header.loop_var;
  for (const auto& iter_arg : *iter_args) env_[iter_arg.var->name_hint()] = iter_arg.var;
  explicit_carries_.push_back(iter_args->size());
  auto body = ParseBody(stmt.attr("body"));
  explicit_carries_.pop_back();
  if (!body) return pypto::unexpected(body.error());
  env_ = std::move(outer);
  auto results = ExplicitResults(*iter_args, *body, header.span);
  if (!results) return pypto::unexpected(results.error());
  return DropInPlaceTensorCarries(header, std::move(*iter_args), std::move(body->stmts), std::move(*results));
}

// `carry=("scalar", "rebind")`: one carry kind per carried value, in the order of init_values.
ir::Result<bool> FunctionParser::ReadCarryKinds(py::handle kinds, std::vector<ir::IterArg>& iter_args) {
  const bool sequence = IsNode(kinds, "Tuple") || IsNode(kinds, "List");
  if (!sequence || py::len(kinds.attr("elts")) != iter_args.size())
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("carry= takes a tuple of {} carry kinds, one per value in init_values",
                                 iter_args.size()),
                     map_.SpanOf(kinds));
  size_t i = 0;
  for (auto element : kinds.attr("elts")) {
    std::optional<ir::CarryKind> kind;
    if (IsNode(element, "Constant") && py::isinstance<py::str>(element.attr("value")))
      kind = ir::CarryKindNamed(element.attr("value").cast<std::string>());
    if (!kind)
      return MakeError(DiagnosticKind::Syntax,
                       "a carry kind is one of \"scalar\", \"task_id\", \"task_id_array\", \"alias\", "
                       "\"rebind\" or \"unclassified\"",
                       map_.SpanOf(element));
    iter_args[i++].carry = *kind;
  }
  return true;
}

// `for i, (acc,) in pl.range(n, init_values=(c,))` whose body yields a store into `acc`: the loop
// writes into the one tensor `c` in every iteration, so it carries nothing for it, the body reads
// `c`, and the result's name means `c` after the loop (as an implicit carry of a tensor updated in
// place does). `stmts` ends with the body's yield.
ir::StmtPtr FunctionParser::DropInPlaceTensorCarries(const LoopHeader& header, std::vector<ir::IterArg> iter_args,
                                                     std::vector<ir::StmtPtr> stmts, std::vector<ir::VarPtr> results) {
  const auto yield = std::static_pointer_cast<const ir::YieldStmt>(stmts.back());
  stmts.pop_back();
  const std::vector<ir::ExprPtr>& yielded = yield->values();
  const ir::TensorAliases aliases(Seq(stmts));
  std::unordered_map<const ir::Var*, ir::VarPtr> uncarried;
  std::vector<ir::IterArg> kept_args;
  std::vector<ir::ExprPtr> kept_values;
  std::vector<ir::VarPtr> kept_results;
  for (size_t i = 0; i < iter_args.size(); ++i) {
    const auto* value = yielded[i]->As<ir::Var>();
    auto init = std::dynamic_pointer_cast<const ir::Var>(iter_args[i].init);
    if (init && value && iter_args[i].var->type()->As<ir::TensorType>() &&
        aliases.Root(value) == iter_args[i].var.get()) {
      uncarried[iter_args[i].var.get()] = std::const_pointer_cast<ir::Var>(init);
      env_[results[i]->name_hint()] = uncarried[iter_args[i].var.get()];
      continue;
    }
    kept_args.push_back(iter_args[i]);
    kept_values.push_back(yielded[i]);
    kept_results.push_back(results[i]);
  }
  if (!kept_values.empty()) stmts.push_back(std::make_shared<ir::YieldStmt>(kept_values, yield->span()));
  ir::StmtPtr body = Seq(std::move(stmts));
  if (!uncarried.empty()) body = ir::SubstituteVars(DropUncarriedJumpValues(body, iter_args, uncarried), uncarried);
  return std::make_shared<ir::ForStmt>(header.loop_var, header.start, header.stop, header.step, std::move(kept_args),
                                       std::move(body), std::move(kept_results), header.kind, header.span);
}

// The jumps of a loop that stopped carrying the tensors in `uncarried` hand on the others only.
ir::StmtPtr FunctionParser::DropUncarriedJumpValues(const ir::StmtPtr& body, const std::vector<ir::IterArg>& iter_args,
                                                    const std::unordered_map<const ir::Var*, ir::VarPtr>& uncarried) {
  return RewriteOwnJumps(body, [&](const ir::JumpStmt& jump) -> ir::StmtPtr {
    std::vector<ir::ExprPtr> values;
    for (size_t i = 0; i < iter_args.size() && i < jump.values().size(); ++i)
      if (!uncarried.contains(iter_args[i].var.get())) values.push_back(jump.values()[i]);
    return MakeJump(jump.Is<ir::BreakStmt>(), std::move(values), jump.span());
  });
}

ir::Result<bool> FunctionParser::CheckCarriedType(const std::string& name, const ir::TypePtr& carried,
                                                  const ir::ExprPtr& next, const ir::Span& span) {
  if (carried->equals(*next->type())) return true;
  return MakeError(DiagnosticKind::Type,
                   fmt::format("'{}' is carried from one loop iteration to the next, but its type changes from {} "
                               "to {}",
                               name, carried->str(), next->type()->str()),
                   span, "a loop-carried value keeps its shape, dtype and memory space in every iteration");
}

// The carried values `(a, b)` of a pl.while_ loop, started at `init_values=(x, y)`.
ir::Result<std::vector<ir::IterArg>> FunctionParser::ExplicitIterArgs(py::handle target, py::handle init_values) {
  if (!IsNode(target, "Tuple") || !(IsNode(init_values, "Tuple") || IsNode(init_values, "List")))
    return MakeError(DiagnosticKind::Syntax, "a pl.while_ loop names its carried values as a tuple",
                     map_.SpanOf(target), "write `for (a, b) in pl.while_(init_values=(x, y)):`");
  py::list names = target.attr("elts"), inits = init_values.attr("elts");
  if (py::len(names) != py::len(inits))
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("the loop names {} carried values but init_values has {}", py::len(names),
                                 py::len(inits)),
                     map_.SpanOf(init_values));
  std::vector<ir::IterArg> iter_args;
  for (size_t i = 0; i < py::len(names); ++i) {
    if (!IsNode(names[i], "Name"))
      return MakeError(DiagnosticKind::Syntax, "carried values are plain names", map_.SpanOf(names[i]));
    auto init = InitValue(inits[i]);
    if (!init) return pypto::unexpected(init.error());
    iter_args.push_back(ir::IterArg{
        std::make_shared<ir::Var>(names[i].attr("id").cast<std::string>(), (*init)->type(), map_.SpanOf(names[i])),
        *init});
  }
  return iter_args;
}

// The results of a loop naming its carried values, bound by the body's trailing
// `ra, rb = pl.yield_(...)`, which becomes the body's YieldStmt.
ir::Result<std::vector<ir::VarPtr>> FunctionParser::ExplicitResults(const std::vector<ir::IterArg>& iter_args,
                                                                    ParsedBody& body, const ir::Span& span) {
  if (!body.yield || body.yield->values.size() != iter_args.size())
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("a loop carrying {} values ends with `... = pl.yield_(...)` of {} values",
                                 iter_args.size(), iter_args.size()),
                     span);
  for (size_t i = 0; i < iter_args.size(); ++i)
    if (auto ok = CheckCarriedType(iter_args[i].var->name_hint(), iter_args[i].var->type(), body.yield->values[i],
                                   body.yield->span);
        !ok)
      return pypto::unexpected(ok.error());
  auto results = YieldResults(*body.yield);
  if (!results) return results;
  if (results->size() != iter_args.size())
    return MakeError(DiagnosticKind::Syntax, "the loop's pl.yield_ must assign its results to names",
                     body.yield->span);
  for (const auto& var : *results) env_[var->name_hint()] = var;
  body.stmts.push_back(std::make_shared<ir::YieldStmt>(body.yield->values, body.yield->span));
  return results;
}

// A carried value's initial value. A name stands for its variable even when its value is a known
// constant, as in the loops the parser builds: the printed `init_values=(i,)` reads back the same.
ir::Result<ir::ExprPtr> FunctionParser::InitValue(py::handle node) {
  if (IsNode(node, "Name"))
    if (auto it = env_.find(node.attr("id").cast<std::string>()); it != env_.end()) return ir::ExprPtr(it->second);
  return ParseExpr(node);
}

}  // namespace pypto::frontend
