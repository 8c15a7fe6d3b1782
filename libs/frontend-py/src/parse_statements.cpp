// FunctionParser: a function's parameters and body, the statement dispatch, return statements and
// pl.dump_tag. The dispatch hands each kind of statement to the file of its construct.
#include "function_parser.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "assigned_names.h"
#include "constant_lists.h"
#include "external_decl.h"
#include "pypto/ir/op_registry.h"

namespace pypto::frontend {

using ir::DiagnosticKind;
using ir::MakeError;

namespace {

// `first`, then the statements of `body`.
ir::StmtPtr Prepended(std::vector<ir::StmtPtr> first, const ir::StmtPtr& body) {
  if (const auto* seq = body->As<ir::SeqStmts>())
    first.insert(first.end(), seq->stmts().begin(), seq->stmts().end());
  else
    first.push_back(body);
  return std::make_shared<ir::SeqStmts>(std::move(first), body->span());
}

}  // namespace

ir::Result<ir::FunctionPtr> FunctionParser::Parse() {
  InlineConstantLists(source_.signature ? source_.signature->def : source_.def, *source_.constants);
  return ParseFunction(source_.def);
}

ir::Result<ir::FunctionPtr> FunctionParser::ParseFunction(py::handle def) {
  if (source_.signature) return ParseMethod(*source_.signature);
  std::vector<ir::VarPtr> params;
  std::vector<ir::ParamDirection> directions;
  std::vector<bool> windows;  // declared a plain pld.DistributedTensor
  py::handle arguments = def.attr("args");
  if (!arguments.attr("vararg").is_none() || !arguments.attr("kwarg").is_none())
    return MakeError(DiagnosticKind::Syntax, "*args and **kwargs are not supported in kernels", map_.SpanOf(def));
  for (auto arg : arguments.attr("args")) {
    std::string name = arg.attr("arg").cast<std::string>();
    auto spec_it = source_.tensor_specs.find(name);
    if (arg.attr("annotation").is_none())
      return MakeError(DiagnosticKind::Type, fmt::format("parameter '{}' is missing a type annotation", name),
                       map_.SpanOf(arg));
    // A @pl.jit function is specialised on the tensors passed; an extern's declaration is a fixed
    // contract with its hand-written kernel (type_resolver.h, StaticExtents).
    auto resolved = ResolveParam(arg.attr("annotation"), name,
                                 spec_it == source_.tensor_specs.end() ? nullptr : &spec_it->second, map_,
                                 source_.constants, &dynamic_, DynamicPolicy::Agree,
                                 IsExternal(source_.attrs) ? StaticExtents::Checked : StaticExtents::FromTensor);
    if (!resolved) return pypto::unexpected(resolved.error());
    // A Python number passed for an entry's scalar parameter specialises the program: the name
    // reads as that constant everywhere, as upstream's JIT substitutes it.
    if (resolved->type->As<ir::ScalarType>() && source_.type == ir::FunctionType::Opaque &&
        source_.constants->contains(name))
      continue;
    auto var = std::make_shared<ir::Var>(name, resolved->type, map_.SpanOf(arg));
    env_[name] = var;
    params.push_back(var);
    directions.push_back(resolved->direction);
    py::handle annotation = arg.attr("annotation");
    windows.push_back(DottedName(IsNode(annotation, "Subscript") ? annotation.attr("value") : annotation) ==
                      "pld.DistributedTensor");
    // An entry's window is memory the ranks share and their kernels write (signals, remote stores),
    // never an input the entry only reads.
    if (windows.back() && source_.type == ir::FunctionType::Opaque) directions.back() = ir::ParamDirection::InOut;
  }
  if (IsExternal(source_.attrs)) return ExternalDeclaration(def, params, directions);
  function_def_ = py::reinterpret_borrow<py::object>(def);
  if (source_.type == ir::FunctionType::InCore) kernel_params_ = params;
  // Only an entry defines the dimensions passed unbound; a kernel reading one falls back (DynamicExtent).
  auto extents = source_.type == ir::FunctionType::Opaque ? DefineUnboundExtents(map_.SpanOf(def))
                                                          : ir::Result<std::vector<ir::StmtPtr>>{};
  if (!extents) return pypto::unexpected(extents.error());
  auto body = ParseBlock(def.attr("body"));
  if (!body) return pypto::unexpected(body.error());
  body = DropUnreadSliceLoads(*body);
  if (!extents->empty()) body = Prepended(std::move(*extents), *body);
  ReturnedWindowsAreWritten(*body, params, windows, directions);
  // The extents of unbound axes the kernel reads come as INDEX parameters after its own (ExtentArgs).
  for (const auto& extent : extent_params_) {
    params.push_back(extent.var);
    directions.push_back(ir::ParamDirection::In);
    program_.kernel_extent_params[source_.name].emplace_back(extent.param, extent.axis);
  }
  std::vector<ir::TypePtr> return_types;
  for (const auto& value : returns_) return_types.push_back(value->type());
  return std::make_shared<ir::Function>(source_.name, params, directions, return_types, *body, source_.type,
                                        source_.attrs, map_.SpanOf(def));
}

// A kernel that returns a window parameter (`signal = pld.tensor.barrier(signal); return out, signal`)
// wrote it: the window is memory its peers and it share, declared `pld.DistributedTensor[...]` with
// no direction, and upstream's model code returns it after a barrier or a remote write. Such a
// parameter is InOut, so the caller's names bind to it and later tasks are ordered after this one.
void FunctionParser::ReturnedWindowsAreWritten(const ir::StmtPtr& body, const std::vector<ir::VarPtr>& params,
                                               const std::vector<bool>& windows,
                                               std::vector<ir::ParamDirection>& directions) const {
  if (!ir::IsKernel(source_.type) || returns_.empty()) return;
  for (const auto& index : ReturnedParamIndices(body, params, returns_))
    if (index && windows[*index] && directions[*index] == ir::ParamDirection::In)
      directions[*index] = ir::ParamDirection::InOut;
}

// A @pl.jit.extern stub: its signature, specialised like a kernel's, and no body. A declared return
// is the first output-like parameter (pl.Out or pl.InOut), which the kernel writes in place.
ir::Result<ir::FunctionPtr> FunctionParser::ExternalDeclaration(py::handle def, const std::vector<ir::VarPtr>& params,
                                                                const std::vector<ir::ParamDirection>& directions) {
  if (auto ok = CheckSignatureOnlyBody(def, map_, source_.name); !ok) return pypto::unexpected(ok.error());
  std::vector<ir::TypePtr> return_types;
  if (!def.attr("returns").is_none()) {
    const auto output = ir::FirstOutputParam(directions);
    if (!output)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("hand-written kernel '{}' declares a return but has no pl.Out or pl.InOut "
                                   "parameter to return",
                                   source_.name),
                       map_.SpanOf(def.attr("returns")));
    return_types.push_back(params[*output]->type());
  }
  return std::make_shared<ir::Function>(source_.name, params, directions, return_types,
                                        std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{}), source_.type,
                                        source_.attrs, map_.SpanOf(def));
}

// A @pl.program method: parameters and return types as declared.
ir::Result<ir::FunctionPtr> FunctionParser::ParseMethod(const Signature& signature) {
  for (const auto& param : signature.params) env_[param->name_hint()] = param;
  dynamic_ = signature.bindings;
  if (IsExternal(signature.attrs)) {
    if (auto ok = CheckSignatureOnlyBody(signature.def, map_, signature.name); !ok) return pypto::unexpected(ok.error());
    return std::make_shared<ir::Function>(signature.name, signature.params, signature.directions,
                                          signature.return_types, std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{}),
                                          signature.type, signature.attrs, map_.SpanOf(signature.def));
  }
  function_def_ = py::reinterpret_borrow<py::object>(signature.def);
  auto body = ParseBlock(signature.def.attr("body"));
  if (!body) return pypto::unexpected(body.error());
  body = DropUnreadSliceLoads(*body);
  std::vector<ir::TypePtr> return_types = signature.return_types;
  if (signature.returns_from_body || ReturnsUndeclared(signature)) {
    return_types.clear();
    for (const auto& value : returns_) return_types.push_back(value->type());
  }
  return std::make_shared<ir::Function>(signature.name, signature.params, signature.directions, return_types,
                                        *body, signature.type, signature.attrs, map_.SpanOf(signature.def));
}

ir::Result<ir::StmtPtr> FunctionParser::ParseBlock(py::handle statements) {
  std::vector<ir::StmtPtr> stmts;
  blocks_.push_back({py::reinterpret_borrow<py::list>(statements), 0});
  auto parsed_all = [&]() -> ir::Result<bool> {
    for (auto stmt : statements) {
      auto parsed = ParseStatement(stmt);
      if (!parsed) return pypto::unexpected(parsed.error());
      Append(stmts, *parsed);
      ++blocks_.back().next;
    }
    return true;
  }();
  blocks_.pop_back();
  if (!parsed_all) return pypto::unexpected(parsed_all.error());
  return std::make_shared<ir::SeqStmts>(std::move(stmts));
}

// Adds a parsed statement to a body; a sequence (an inlined call's body, a branch chosen at compile
// time) is spliced in, so bodies stay flat.
void FunctionParser::Append(std::vector<ir::StmtPtr>& stmts, const ir::StmtPtr& stmt) {
  if (!stmt) return;
  if (const auto* seq = stmt->As<ir::SeqStmts>()) {
    for (const auto& inner : seq->stmts()) Append(stmts, inner);
    return;
  }
  stmts.push_back(stmt);
}

// One statement, preceded by the bodies of the @pl.jit.inline functions it calls. Returns null
// for statements that produce no IR (docstrings, pass).
ir::Result<ir::StmtPtr> FunctionParser::ParseStatement(py::handle stmt) {
  auto outer = std::exchange(prelude_, {});
  auto parsed = ParseOneStatement(stmt);
  auto inlined = std::exchange(prelude_, std::move(outer));
  if (!parsed || inlined.empty()) return parsed;
  Append(inlined, *parsed);
  return Seq(std::move(inlined), map_.SpanOf(stmt));
}

ir::Result<ir::StmtPtr> FunctionParser::ParseOneStatement(py::handle stmt) {
  std::string type = NodeType(stmt);
  ir::Span span = map_.SpanOf(stmt);
  if (type == "Pass") return ir::StmtPtr{};
  if (type == "Expr") {
    py::handle value = stmt.attr("value");
    if (IsNode(value, "Constant") && py::isinstance<py::str>(value.attr("value"))) return ir::StmtPtr{};
    if (IsMethodCall(value, "bind_dynamic")) return ParseBindDynamic(value);
    if (IsDumpTag(value)) return ParseDumpTag(value);
    if (IsSubmit(value)) return ParseSubmit(stmt, value, {});
    if (IsElementWrite(value)) return ParseElementWrite(stmt, value);
    if (IsExplicitJump(value)) return ParseExplicitJump(value, span);
    if (IsInlineCall(value)) {  // its body is the statement; a value it returns is dropped
      auto result = ParseExpr(value);
      if (!result) return pypto::unexpected(result.error());
      return ir::StmtPtr{};
    }
    if (IsNode(value, "Constant") && py::object(value.attr("value")).ptr() == Py_Ellipsis)
      return MakeError(DiagnosticKind::Syntax, "a body of `...` declares a hand-written kernel", span,
                       "give the kernel's source: @pl.function(type=pl.FunctionType.AIV, external_source=\"k.cpp\")");
    auto expr = ParseExpr(value);
    if (!expr) return pypto::unexpected(expr.error());
    return ir::StmtPtr(std::make_shared<ir::EvalStmt>(*expr, span));
  }
  if (AssemblesSliceBackInPlace(stmt)) return Seq({}, span);
  if (auto copy = CopyKernelScope(stmt)) return ParseWith(*copy);
  if (type == "Assign" || type == "AnnAssign") return ParseAssign(stmt, type == "AnnAssign");
  if (type == "With") return ParseWith(stmt);
  if (type == "For") return ParseFor(stmt);
  if (type == "While") return ParseWhile(stmt);
  if (type == "If") return ParseIf(stmt);
  if (py::hasattr(stmt, "value") && IsYieldCall(stmt.attr("value")))
    return MakeError(DiagnosticKind::Syntax, "pl.yield_ must be the last statement of a loop or if body", span);
  if (type == "Return") return ParseReturn(stmt);
  if ((type == "Break" || type == "Continue") && !jump_scopes_.empty() && jump_scopes_.back().control.owns(stmt))
    return ParseJump(stmt, type == "Break");
  if (type == "Break" || type == "Continue")
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("'{}' must be inside a pl.range loop of the same scope", type == "Break" ? "break"
                                                                                                          : "continue"),
                     span, "a jump cannot leave a pl.at scope or a function");
  return MakeError(DiagnosticKind::Syntax, fmt::format("'{}' statements are not supported in kernels yet", type),
                   span);
}

// `out = pl.assemble(out, src, offset)` in orchestration copies the tensor src into a window of out:
// the statement becomes a kernel of its own, `with pl.at(level=pl.Level.CORE_GROUP):` around it,
// where the assemble loads src and stores it. The scope's nodes take the statement's location.
std::optional<py::object> FunctionParser::CopyKernelScope(py::handle stmt) const {
  if (kernel_depth_ > 0 || !py::hasattr(stmt, "value") || !IsNode(stmt.attr("value"), "Call")) return std::nullopt;
  const std::string name = DottedName(stmt.attr("value").attr("func"));
  if (name != "pl.assemble" && name != "pl.tensor.assemble") return std::nullopt;
  return KernelScopeAround(stmt);
}

// `with pl.at(level=pl.Level.CORE_GROUP, name_hint='assemble'):` around `stmt`, at its location.
py::object FunctionParser::KernelScopeAround(py::handle stmt) {
  py::module_ ast = py::module_::import("ast");
  py::object scope =
      ast.attr("parse")("with pl.at(level=pl.Level.CORE_GROUP, name_hint='assemble'):\n    pass").attr("body")[
          py::int_(0)];
  for (auto node : ast.attr("walk")(scope)) ast.attr("copy_location")(node, stmt);
  scope.attr("body") = py::list();
  scope.attr("body").attr("append")(stmt);
  return scope;
}

// ---- pl.dump_tag -------------------------------------------------------------------------------
// `pl.dump_tag(t)` marks the orchestration tensor variable t for the args dump: codegen-orch flags t
// in every later submit (the variable, not its buffer: a reshape of t is another variable). The IR
// keeps it as the statement `pl.tensor.dump_tag(t)`, which is how the printer writes it back.

bool FunctionParser::IsDumpTag(py::handle node) {
  if (!IsNode(node, "Call")) return false;
  const std::string name = DottedName(node.attr("func"));
  return name == "pl.dump_tag" || name == "pl.tensor.dump_tag";
}

ir::Result<ir::StmtPtr> FunctionParser::ParseDumpTag(py::handle call) {
  const ir::Span span = map_.SpanOf(call);
  if (kernel_depth_ > 0)
    return MakeError(DiagnosticKind::InvalidOperation,
                     "pl.dump_tag marks an orchestration tensor for the args dump; it cannot be used inside a kernel",
                     span, "call pl.dump_tag(t) in the orchestration, before the scope or kernel call that uses t");
  py::list args = call.attr("args");
  if (py::len(args) != 1 || py::len(call.attr("keywords")) != 0)
    return MakeError(DiagnosticKind::InvalidOperation, "pl.dump_tag takes one tensor: pl.dump_tag(t)", span);
  auto tensor = ParseExpr(args[0]);
  if (!tensor) return pypto::unexpected(tensor.error());
  if (!(*tensor)->As<ir::Var>() || !(*tensor)->type()->As<ir::TensorType>())
    return MakeError(DiagnosticKind::Type,
                     fmt::format("pl.dump_tag marks a tensor variable for the args dump, got {}",
                                 (*tensor)->type()->str()),
                     map_.SpanOf(args[0]));
  auto tagged = ir::OpRegistry::Get().CreateCall("tensor.dump_tag", {*tensor}, {}, span);
  if (!tagged) return pypto::unexpected(tagged.error());
  return ir::StmtPtr(std::make_shared<ir::EvalStmt>(*tagged, span));
}

ir::StmtPtr FunctionParser::Seq(std::vector<ir::StmtPtr> stmts, const ir::Span& span) {
  return std::make_shared<ir::SeqStmts>(std::move(stmts), span);
}

ir::Result<ir::StmtPtr> FunctionParser::ParseReturn(py::handle stmt) {
  auto parsed = ReturnValues(stmt);
  if (!parsed) return pypto::unexpected(parsed.error());
  std::vector<ir::ExprPtr> values = std::move(*parsed);
  if (auto ok = CheckNoTileReturned(stmt, values); !ok) return pypto::unexpected(ok.error());
  if (source_.signature && !ReturnsUndeclared(*source_.signature)) {
    const Signature& signature = *source_.signature;
    auto ok = signature.returns_from_body ? CheckReturnAnnotation(signature, values, map_.SpanOf(stmt))
                                          : CheckReturn(signature, values, map_.SpanOf(stmt));
    if (!ok) return pypto::unexpected(ok.error());
  }
  returns_ = values;
  return ir::StmtPtr(std::make_shared<ir::ReturnStmt>(std::move(values), map_.SpanOf(stmt)));
}

// An entry hands its results back in the tensors its caller passed: `return t`, with t a tile
// computed in a pl.at scope, returns a tensor the run made for the tile (StoreIntoNewTensor), which
// the caller never sees (issue 32: it once came back as the zeros the caller passed, then as an
// unwritten pl.Out). The fix is the store the user left out, into the pl.Out the entry declares.
ir::Result<bool> FunctionParser::CheckNoTileReturned(py::handle stmt, const std::vector<ir::ExprPtr>& values) const {
  if (kernel_depth_ > 0) return true;
  if (source_.type != ir::FunctionType::Opaque && source_.type != ir::FunctionType::Orchestration) return true;
  py::handle value = stmt.attr("value");
  std::vector<py::handle> nodes;
  if (!value.is_none() && IsNode(value, "Tuple")) {
    for (auto element : value.attr("elts")) nodes.push_back(element);
  } else if (!value.is_none()) {
    nodes.push_back(value);
  }
  for (size_t i = 0; i < values.size() && i < nodes.size(); ++i) {
    // Only such tiles: a tile value here is an orchestration slice (`rows = x[0:16, :]`), which the
    // outliner reports where it is made.
    const auto* var = values[i]->As<ir::Var>();
    const auto made = var ? tiles_as_tensors_.find(var) : tiles_as_tensors_.end();
    if (made == tiles_as_tensors_.end()) continue;
    const ir::TypePtr tile_type = made->second;
    const auto* tile = tile_type->As<ir::TileType>();
    if (!tile) continue;
    // The outputs the help can name: the parameters annotated pl.Out[...] or pl.InOut[...].
    std::string out = "out";
    for (auto arg : source_.def.attr("args").attr("args")) {
      py::handle annotation = arg.attr("annotation");
      if (annotation.is_none() || !IsNode(annotation, "Subscript")) continue;
      const std::string wrapper = DottedName(annotation.attr("value"));
      if (wrapper != "pl.Out" && wrapper != "pl.InOut") continue;
      out = arg.attr("arg").cast<std::string>();
      break;
    }
    const std::string text = py::module_::import("ast").attr("unparse")(nodes[i]).cast<std::string>();
    std::string zeros;
    for (size_t d = 0; d < tile->shape().size(); ++d) zeros += d == 0 ? "0" : ", 0";
    return MakeError(DiagnosticKind::Type,
                     fmt::format("'{}' returns `{}`, a tile computed in a pl.at scope ({}); an entry hands its "
                                 "results back in the tensors its caller passes, so the caller would never see it",
                                 source_.name, text, tile_type->str()),
                     map_.SpanOf(nodes[i]),
                     fmt::format("store the tile into the output inside the scope, `{0} = pl.store({1}, [{2}], {0})`, "
                                 "and `return {0}`",
                                 out, text, zeros));
  }
  return true;
}

// An entry without a `->` annotation (upstream's Opaque `main(self, x, out: pl.Out[...])` that ends
// `return out`) returns what its body returns: nothing calls it, so nothing needs the types first.
bool FunctionParser::ReturnsUndeclared(const Signature& signature) {
  return signature.def.attr("returns").is_none() &&
         (signature.type == ir::FunctionType::Opaque || signature.type == ir::FunctionType::Orchestration);
}

// A method returns what its `->` annotation declares.
ir::Result<bool> FunctionParser::CheckReturn(const Signature& signature, const std::vector<ir::ExprPtr>& values,
                                             const ir::Span& span) {
  const auto& declared = signature.return_types;
  auto listed = [](const std::vector<ir::TypePtr>& types) {
    std::vector<std::string> parts;
    for (const auto& type : types) parts.push_back(type->str());
    return parts.empty() ? std::string("nothing") : fmt::format("{}", fmt::join(parts, ", "));
  };
  std::vector<ir::TypePtr> actual;
  for (const auto& value : values) actual.push_back(value->type());
  bool ok = declared.size() == actual.size();
  for (size_t i = 0; ok && i < declared.size(); ++i) ok = Assignable(declared[i], actual[i]);
  if (ok) return true;
  return MakeError(DiagnosticKind::Type,
                   fmt::format("function '{}' returns {} but declares {}", signature.name, listed(actual),
                               listed(declared)),
                   span,
                   declared.empty() ? "annotate the return type: def f(self, ...) -> pl.Tensor[[shape], dtype]" : "");
}

// A specialisation whose `->` names a dimension its parameters disagree on: each value returned
// must fit its annotation, the dimension taking the value's extent (as a parameter's would).
ir::Result<bool> FunctionParser::CheckReturnAnnotation(const Signature& signature,
                                                       const std::vector<ir::ExprPtr>& values,
                                                       const ir::Span& span) const {
  py::handle returns = signature.def.attr("returns");
  std::vector<py::handle> declared;
  const std::string head = IsNode(returns, "Subscript") ? DottedName(returns.attr("value")) : "";
  if (head == "tuple" || head == "pl.Tuple") {
    py::handle slice = returns.attr("slice");
    if (IsNode(slice, "Tuple"))
      for (auto element : slice.attr("elts")) declared.push_back(element);
    else
      declared.push_back(slice);
  } else {
    declared.push_back(returns);
  }
  auto unparse = [](py::handle node) {
    return py::module_::import("ast").attr("unparse")(node).cast<std::string>();
  };
  if (declared.size() != values.size())
    return MakeError(DiagnosticKind::Type,
                     fmt::format("function '{}' returns {} values but declares {}", signature.name, values.size(),
                                 declared.size()),
                     span);
  for (size_t i = 0; i < values.size(); ++i) {
    const auto* tensor = values[i]->type()->As<ir::TensorType>();
    std::optional<TensorSpec> spec;
    if (tensor) spec = TensorSpec{tensor->shape(), tensor->dtype()};
    DynamicBindings bindings = signature.bindings;
    auto fits = ResolveParam(declared[i], "return value", spec ? &*spec : nullptr, map_, source_.constants,
                             &bindings, DynamicPolicy::PerParameter);
    if (!fits || (!tensor && !fits->type->equals(*values[i]->type())))
      return MakeError(DiagnosticKind::Type,
                       fmt::format("function '{}' returns {} where it declares {}", signature.name,
                                   values[i]->type()->str(), unparse(declared[i])),
                       span);
  }
  return true;
}

}  // namespace pypto::frontend
