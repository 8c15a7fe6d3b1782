// FunctionParser: `with` statements: pl.at kernel scopes (and the tiles they hand to later code as
// tensors), runtime scopes and pl.cluster.
#include "function_parser.h"

#include <fmt/format.h>

#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"
#include "runtime_scope.h"
#include "scope_optimizations.h"

namespace pypto::frontend {

using ir::DiagnosticKind;
using ir::MakeError;

ir::Result<ir::StmtPtr> FunctionParser::ParseWith(py::handle stmt) {
  ir::Span span = map_.SpanOf(stmt);
  py::list items = stmt.attr("items");
  if (py::len(items) != 1)
    return MakeError(DiagnosticKind::Syntax, "one context manager per 'with' statement", span);
  py::handle context = items[0].attr("context_expr");
  if (IsNode(context, "Call") && DottedName(context.attr("func")) == "pl.spmd") return ParseSpmd(stmt, context);
  if (IsNode(context, "Call") && DottedName(context.attr("func")) == "pl.cluster")
    return ParseCluster(stmt, context, items[0].attr("optional_vars"));
  if (IsRuntimeScope(context)) return ParseRuntimeScope(stmt, context, items[0].attr("optional_vars"));
  if (!IsNode(context, "Call") || DottedName(context.attr("func")) != "pl.at")
    return MakeError(DiagnosticKind::Syntax,
                     "only 'with pl.at(...)', 'with pl.spmd(...)' and runtime scopes ('with pl.manual_scope()', "
                     "'with pl.scope(...)') are supported yet",
                     map_.SpanOf(context));
  std::string level, name_hint;
  ir::LaunchOrder order;
  for (auto keyword : context.attr("keywords")) {
    std::string key = keyword.attr("arg").is_none() ? "" : keyword.attr("arg").cast<std::string>();
    py::handle value = keyword.attr("value");
    if (key == "level") {
      level = DottedName(value);
    } else if (key == "name_hint" && IsNode(value, "Constant") && py::isinstance<py::str>(value.attr("value"))) {
      name_hint = value.attr("value").cast<std::string>();
    } else if (key == "optimizations") {
      // Checked, not recorded: the hints only tune a device's overlap (scope_optimizations.cpp).
      if (auto read = ReadScopeOptimizations(value, "pl.at", map_); !read)
        return pypto::unexpected(read.error());
    } else if (key == "deps") {
      auto deps = ParseDeps(value);
      if (!deps) return pypto::unexpected(deps.error());
      order.deps = std::move(*deps);
    } else if (key == "allow_early_resolve") {
      auto flag = BoolOption(value, "pl.at allow_early_resolve");
      if (!flag) return pypto::unexpected(flag.error());
      order.allow_early_resolve = *flag;
    } else if (key == "no_dep_args") {
      if (auto ok = CheckNoDepArgs(value); !ok) return pypto::unexpected(ok.error());
    } else {
      return MakeError(DiagnosticKind::Syntax, fmt::format("pl.at argument '{}' is not supported yet", key),
                       map_.SpanOf(value));
    }
  }
  if (level != "pl.Level.CORE_GROUP")
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("pl.at(level={}) is not supported yet; use level=pl.Level.CORE_GROUP",
                                 level.empty() ? "<missing>" : level),
                     map_.SpanOf(context));
  if (kernel_depth_ > 0)
    return MakeError(DiagnosticKind::Syntax, "a pl.at scope cannot appear inside a kernel",
                     map_.SpanOf(context), source_.signature && ir::IsKernel(source_.type)
                                               ? "a kernel function is already one kernel"
                                           : source_.type == ir::FunctionType::InCore
                                               ? "a @pl.jit.incore function is already one kernel"
                                               : "nested pl.at scopes are not supported yet");
  auto body = ParseKernelScopeBody(stmt.attr("body"));
  if (!body) return pypto::unexpected(body.error());
  // Bound after the body: the region's TaskId is not visible inside it.
  auto task_id = BindScopeTaskId(items[0].attr("optional_vars"), "pl.at");
  if (!task_id) return pypto::unexpected(task_id.error());
  order.task_id = *task_id;
  return ir::StmtPtr(std::make_shared<ir::InCoreScopeStmt>(name_hint, *body, span, nullptr, false, std::move(order)));
}

// `no_dep_args=[t, ...]` names tensors whose dependency tracking upstream turns off for the scope's
// task, an opt-out the author takes when deps= already orders it. Tracking them anyway orders the
// task after every earlier writer or reader of t, which computes the same results, so the names
// are only checked.
ir::Result<bool> FunctionParser::CheckNoDepArgs(py::handle value) const {
  if (!IsNode(value, "List") && !IsNode(value, "Tuple"))
    return MakeError(DiagnosticKind::Syntax, "pl.at(no_dep_args=...) takes a list of tensor names",
                     map_.SpanOf(value));
  for (auto item : value.attr("elts")) {
    auto it = IsNode(item, "Name") ? env_.find(item.attr("id").cast<std::string>()) : env_.end();
    if (it == env_.end() || !it->second->type()->As<ir::TensorType>())
      return MakeError(DiagnosticKind::Syntax, "pl.at(no_dep_args=...) names tensors defined before the scope",
                       map_.SpanOf(item));
  }
  return true;
}

// The body of a `with pl.at(...)` or `with pl.spmd(...)` kernel scope. Its names stay bound after
// it (a tensor it stores into is read later), but the scalars and tiles it computes belong to that
// kernel; kernel_values_ remembers them so that a later loop does not carry them in.
ir::Result<ir::StmtPtr> FunctionParser::ParseKernelScopeBody(py::handle body) {
  const auto before = env_;
  ++kernel_depth_;
  auto parsed = ParseBlock(body);
  if (--kernel_depth_ == 0) written_through_.clear();
  if (!parsed) return parsed;
  std::vector<ir::StmtPtr> stores;
  for (auto& [name, var] : env_) {
    auto old = before.find(name);
    if ((old != before.end() && old->second == var) || var->type()->As<ir::TensorType>()) continue;
    if (kernel_depth_ == 0 && var->type()->As<ir::TileType>() && ReadAsTensorAfterCurrentStatement(name)) {
      auto stored = StoreIntoNewTensor(var, stores);
      if (!stored) return pypto::unexpected(stored.error());
      var = *stored;
      continue;
    }
    kernel_values_.insert(var);
  }
  if (stores.empty()) return parsed;
  auto stmts = ir::FlattenStmts(*parsed);
  stmts.insert(stmts.end(), stores.begin(), stores.end());
  return ir::StmtPtr(std::make_shared<ir::SeqStmts>(std::move(stmts), (*parsed)->span()));
}

// A tile computed in a kernel scope and read by orchestration code (`w = pl.reshape(y, ...)`) or a
// later loop (`for b ...: y = pl.assemble(y, row, [b, 0])` in another scope): upstream's scope is
// made of tensor ops, so such a value is a tensor the kernel writes, which the loop may update in
// place. It becomes one here too: a tensor
// created before the scope (a statement of the scope's prelude) that the tile is stored into at
// the scope's end; the name then stands for the stored tensor.
ir::Result<ir::VarPtr> FunctionParser::StoreIntoNewTensor(const ir::VarPtr& tile_var,
                                                          std::vector<ir::StmtPtr>& stores) {
  const auto& tile = *tile_var->type()->As<ir::TileType>();
  const ir::Span& span = tile_var->span();
  std::vector<ir::ExprPtr> shape, offsets;
  for (int64_t extent : tile.shape()) {
    shape.push_back(std::make_shared<ir::ConstInt>(extent, ir::DataType::INDEX, span));
    offsets.push_back(std::make_shared<ir::ConstInt>(0, ir::DataType::INDEX, span));
  }
  auto create = ir::OpRegistry::Get().CreateCall("tensor.create", {Tuple(shape, span)},
                                                 {{"dtype", ir::OpAttr(tile.dtype())}}, span);
  if (!create) return pypto::unexpected(create.error());
  auto tensor = std::make_shared<ir::Var>(tile_var->name_hint(), (*create)->type(), span);
  prelude_.push_back(std::make_shared<ir::AssignStmt>(tensor, *create, span));
  auto store = ir::OpRegistry::Get().CreateCall("tile.store", {tile_var, Tuple(offsets, span), tensor}, {}, span);
  if (!store) return pypto::unexpected(store.error());
  auto stored = std::make_shared<ir::Var>(tile_var->name_hint(), (*store)->type(), span);
  stores.push_back(std::make_shared<ir::AssignStmt>(stored, *store, span));
  tiles_as_tensors_[stored.get()] = tile_var->type();
  return ir::VarPtr(stored);
}

// Whether `name` is read after the statement being parsed, before anything rebinds it, other than
// by a later pl.at scope outside any loop: in the statements that follow it in its block, then in
// those following each enclosing block's statement. A statement that reads the name
// (`k = pl.assemble(k, ...)`) reads the earlier value; one that only assigns it
// (`k = pl.cast(...)`) ends the search. A later scope reading the tile needs no tensor:
// OutlineIncoreScopes hands a tile to a later kernel itself.
bool FunctionParser::ReadAsTensorAfterCurrentStatement(const std::string& name) const {
  for (auto frame = blocks_.rbegin(); frame != blocks_.rend(); ++frame) {
    py::list rest;
    for (size_t i = frame->next + 1; i < py::len(frame->statements); ++i) rest.append(frame->statements[i]);
    if (auto use = FirstUse(rest, name); use != NameUse::kNone)
      return use == NameUse::kRead || use == NameUse::kReadInLoop;
  }
  return false;
}

// The first use of `name` in `statements`, in the order they run. A `with` body always runs, so a
// rebinding there counts; one in a branch or loop body may not run, so only reads count there.
FunctionParser::NameUse FunctionParser::FirstUse(py::handle statements, const std::string& name) {
  for (auto stmt : statements) {
    const bool with = IsNode(stmt, "With");
    const bool loop = IsNode(stmt, "For") || IsNode(stmt, "While");
    if (!with && !loop && !IsNode(stmt, "If")) {
      if (ReadsName(stmt, name)) return NameUse::kRead;
      if (AssignsName(stmt, name)) return NameUse::kRebound;
      continue;
    }
    for (auto item : with ? py::list(stmt.attr("items")) : py::list())
      if (ReadsName(item, name)) return NameUse::kRead;
    for (const char* header : {"test", "iter"})
      if (py::hasattr(stmt, header) && ReadsName(stmt.attr(header), name)) return NameUse::kRead;
    NameUse body = FirstUse(stmt.attr("body"), name);
    if (py::hasattr(stmt, "orelse") && !IsRead(body))
      if (NameUse orelse = FirstUse(stmt.attr("orelse"), name); IsRead(orelse)) body = orelse;
    if (IsRead(body)) {
      if (loop) return NameUse::kReadInLoop;
      if (with && IsKernelScope(stmt) && body == NameUse::kRead) return NameUse::kReadInKernelScope;
      return body;
    }
    if (with && body == NameUse::kRebound) return body;
  }
  return NameUse::kNone;
}

bool FunctionParser::IsKernelScope(py::handle with) {
  py::handle context = py::list(with.attr("items"))[0].attr("context_expr");
  return IsNode(context, "Call") && DottedName(context.attr("func")) == "pl.at";
}

bool FunctionParser::ReadsName(py::handle node, const std::string& name) {
  for (auto inner : py::module_::import("ast").attr("walk")(node)) {
    const bool augmented = IsNode(inner, "AugAssign");  // `y += 1` reads y, though its target is a store
    py::handle named = augmented ? inner.attr("target") : inner;
    if (IsNode(named, "Name") && named.attr("id").cast<std::string>() == name &&
        (augmented || IsNode(named.attr("ctx"), "Load")))
      return true;
  }
  return false;
}

bool FunctionParser::AssignsName(py::handle stmt, const std::string& name) {
  if (!IsNode(stmt, "Assign") && !IsNode(stmt, "AnnAssign")) return false;
  py::list targets = IsNode(stmt, "Assign") ? py::list(stmt.attr("targets")) : py::list();
  if (IsNode(stmt, "AnnAssign")) targets.append(stmt.attr("target"));
  for (auto target : targets)
    if (IsNode(target, "Name") && target.attr("id").cast<std::string>() == name) return true;
  return false;
}

// `with pl.manual_scope():` / `with pl.scope(mode=...)`: a runtime scope around orchestration code.
ir::Result<ir::StmtPtr> FunctionParser::ParseRuntimeScope(py::handle stmt, py::handle context, py::handle target) {
  const RuntimeScopePlace place{.in_kernel = kernel_depth_ > 0, .in_manual_scope = manual_scopes_ > 0};
  auto manual = ReadRuntimeScope(context, target, place, map_);
  if (!manual) return pypto::unexpected(manual.error());
  manual_scopes_ += *manual ? 1 : 0;
  auto body = ParseBlock(stmt.attr("body"));
  manual_scopes_ -= *manual ? 1 : 0;
  if (!body) return body;
  return ir::StmtPtr(std::make_shared<ir::RuntimeScopeStmt>(*manual, *body, map_.SpanOf(stmt)));
}

// `with pl.cluster():` asks the device to co-schedule the AIC and AIV kernels launched in its body
// on one cluster. What they compute does not depend on it, and the runtime already runs a mixed
// kernel's parts as one group, so its body is orchestration code like any other.
ir::Result<ir::StmtPtr> FunctionParser::ParseCluster(py::handle stmt, py::handle context, py::handle target) {
  const ir::Span span = map_.SpanOf(context);
  if (kernel_depth_ > 0)
    return MakeError(DiagnosticKind::Syntax, "'with pl.cluster()' groups kernel launches in orchestration code", span,
                     "open the cluster around the pl.spmd or pl.at scope, not inside it");
  if (!target.is_none())
    return MakeError(DiagnosticKind::Syntax, "'with pl.cluster()' has no value to bind with 'as'", span);
  if (py::len(context.attr("args")) > 0)
    return MakeError(DiagnosticKind::Syntax, "pl.cluster() takes only name_hint=...", span);
  for (auto keyword : context.attr("keywords")) {
    const std::string key = keyword.attr("arg").is_none() ? "**" : keyword.attr("arg").cast<std::string>();
    if (key != "name_hint" || !IsNode(keyword.attr("value"), "Constant") ||
        !py::isinstance<py::str>(keyword.attr("value").attr("value")))
      return MakeError(DiagnosticKind::Syntax, "pl.cluster() takes only name_hint=\"...\"", map_.SpanOf(keyword));
  }
  ++cluster_depth_;
  auto body = ParseBlock(stmt.attr("body"));
  --cluster_depth_;
  return body;
}

}  // namespace pypto::frontend
