// The AST walker: one Python function definition -> one IR function; a `@pl.program` class -> a program.
#include "pypto/frontend/parser.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>
#include <span>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <variant>

#include "affine_form.h"
#include "assigned_names.h"
#include "boolean_conditions.h"
#include "constant_lists.h"
#include "ast_node.h"
#include "index_op_forms.h"
#include "call_builder.h"
#include "external_decl.h"
#include "loop_control.h"
#include "module_functions.h"
#include "comm_spelling.h"
#include "op_resolver.h"
#include "pypto/ir/functor.h"
#include "pypto/ir/mask_pattern.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"
#include "pypto/ir/tensor_aliases.h"
#include "program_signature.h"
#include "runtime_scope.h"
#include "spmd_launch.h"
#include "spmd_submit.h"
#include "syncall_launch_check.h"
#include "type_resolver.h"

namespace pypto::frontend {
namespace {

using ir::DiagnosticKind;
using ir::MakeError;



// A generic @pl.program method specialised for one call's argument types. Parsers hold pointers into
// it, so it lives in ProgramContext::method_specialisations (std::map nodes stay put).
struct MethodSpecialisation {
  Constants constants;  // the program's, with the dimensions its parameters agree on as numbers
  Signature signature;
  ir::FunctionPtr function;  // null while its body is being parsed
};

// What every function parser of one program shares: the request, and the kernels parsed so far
// (one per specialisation of a `@pl.jit.incore` function). A `@pl.program` has no ParseRequest but the
// signatures of its methods instead.
struct ProgramContext {
  const ParseRequest* request = nullptr;
  const std::map<std::string, Signature>* methods = nullptr;
  std::string program_name;
  std::vector<ir::FunctionPtr> kernels;
  std::map<std::string, ir::FunctionPtr> specialisations;  // "name(arg types)" -> kernel
  std::set<std::string> names;                              // function names taken
  std::set<std::string> parsing;                            // sub-functions being parsed (recursion)
  // Scalar variables assigned an integer constant: reading one reads the constant, so sizes and
  // launch counts computed from them (`t_dim // 8`) are known at compile time.
  // Keyed by Var::id(), not address: Vars of a discarded parse attempt die and their addresses return.
  std::unordered_map<uint64_t, int64_t> known_ints;
  // What each integer scalar variable was assigned (by Var id): a slice `t[c0:c1]` whose bounds were
  // computed earlier has a size known at compile time when c1 - c0 folds to a constant.
  std::unordered_map<uint64_t, ir::ExprPtr> scalar_values;
  // A @pl.program: the constants its methods read, and one specialisation per argument signature of
  // each generic method (one whose parameters name pl.dynamic dimensions).
  const Constants* constants = nullptr;
  std::map<std::string, MethodSpecialisation> method_specialisations;  // "name(arg types)" -> it
  std::map<std::string, std::vector<ir::FunctionPtr>> specialised_methods;  // generic name -> functions
};

// One function's source as the parser sees it.
struct FunctionSource {
  std::string name;
  py::object def;  // the ast.FunctionDef
  SourceMap map;
  const std::map<std::string, Constant>* constants;
  std::map<std::string, TensorSpec> tensor_specs;
  ir::FunctionType type = ir::FunctionType::Opaque;
  const Signature* signature = nullptr;  // a @pl.program method: types come from its annotations
  std::map<std::string, ir::AttrValue> attrs;  // a @pl.jit.extern kernel's "external_source", ...
};

ir::Result<py::object> ParseDef(const std::string& source, const SourceMap& map) {
  py::object module = py::module_::import("ast").attr("parse")(source, map.filename);
  py::list body = module.attr("body");
  if (py::len(body) != 1 || !IsNode(body[0], "FunctionDef"))
    return MakeError(DiagnosticKind::Syntax, "expected exactly one function definition",
                     ir::Span{map.filename, map.line_offset + 1, 1});
  return py::object(body[0]);
}

// The specialisation of generic method `generic` for the tensors `specs` (by parameter name), parsed
// on first use; `call` is where it is called (null for the entry, which a run specialises).
ir::Result<const MethodSpecialisation*> SpecialiseMethod(ProgramContext& program, const Signature& generic,
                                                         const std::map<std::string, TensorSpec>& specs,
                                                         const ir::Span* call);

class FunctionParser {
  using Env = std::unordered_map<std::string, ir::VarPtr>;

 public:
  FunctionParser(ProgramContext& program, const FunctionSource& source)
      : program_(program), source_(source), map_(source.map),
        kernel_depth_(ir::IsKernel(source.type) ? 1 : 0) {}

  ir::Result<ir::FunctionPtr> Parse() {
    InlineConstantLists(source_.signature ? source_.signature->def : source_.def, *source_.constants);
    return ParseFunction(source_.def);
  }

 private:
  ir::Result<ir::FunctionPtr> ParseFunction(py::handle def) {
    if (source_.signature) return ParseMethod(*source_.signature);
    std::vector<ir::VarPtr> params;
    std::vector<ir::ParamDirection> directions;
    py::handle arguments = def.attr("args");
    if (!arguments.attr("vararg").is_none() || !arguments.attr("kwarg").is_none())
      return MakeError(DiagnosticKind::Syntax, "*args and **kwargs are not supported in kernels", map_.SpanOf(def));
    for (auto arg : arguments.attr("args")) {
      std::string name = arg.attr("arg").cast<std::string>();
      auto spec_it = source_.tensor_specs.find(name);
      if (arg.attr("annotation").is_none())
        return MakeError(DiagnosticKind::Type, fmt::format("parameter '{}' is missing a type annotation", name),
                         map_.SpanOf(arg));
      auto resolved = ResolveParam(arg.attr("annotation"), name,
                                   spec_it == source_.tensor_specs.end() ? nullptr : &spec_it->second, map_,
                                   source_.constants, &dynamic_);
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
    }
    if (IsExternal(source_.attrs)) return ExternalDeclaration(def, params, directions);
    function_def_ = py::reinterpret_borrow<py::object>(def);
    auto body = ParseBlock(def.attr("body"));
    if (!body) return pypto::unexpected(body.error());
    body = DropUnreadSliceLoads(*body);
    std::vector<ir::TypePtr> return_types;
    for (const auto& value : returns_) return_types.push_back(value->type());
    return std::make_shared<ir::Function>(source_.name, params, directions, return_types, *body, source_.type,
                                          std::map<std::string, ir::AttrValue>{}, map_.SpanOf(def));
  }

  // A @pl.jit.extern stub: its signature, specialised like a kernel's, and no body. A declared return
  // is the first output-like parameter (pl.Out or pl.InOut), which the kernel writes in place.
  ir::Result<ir::FunctionPtr> ExternalDeclaration(py::handle def, const std::vector<ir::VarPtr>& params,
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
  ir::Result<ir::FunctionPtr> ParseMethod(const Signature& signature) {
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

  ir::Result<ir::StmtPtr> ParseBlock(py::handle statements) {
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
  static void Append(std::vector<ir::StmtPtr>& stmts, const ir::StmtPtr& stmt) {
    if (!stmt) return;
    if (const auto* seq = stmt->As<ir::SeqStmts>()) {
      for (const auto& inner : seq->stmts()) Append(stmts, inner);
      return;
    }
    stmts.push_back(stmt);
  }

  // One statement, preceded by the bodies of the @pl.jit.inline functions it calls. Returns null
  // for statements that produce no IR (docstrings, pass).
  ir::Result<ir::StmtPtr> ParseStatement(py::handle stmt) {
    auto outer = std::exchange(prelude_, {});
    auto parsed = ParseOneStatement(stmt);
    auto inlined = std::exchange(prelude_, std::move(outer));
    if (!parsed || inlined.empty()) return parsed;
    Append(inlined, *parsed);
    return Seq(std::move(inlined), map_.SpanOf(stmt));
  }

  ir::Result<ir::StmtPtr> ParseOneStatement(py::handle stmt) {
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
  std::optional<py::object> CopyKernelScope(py::handle stmt) const {
    if (kernel_depth_ > 0 || !py::hasattr(stmt, "value") || !IsNode(stmt.attr("value"), "Call")) return std::nullopt;
    const std::string name = DottedName(stmt.attr("value").attr("func"));
    if (name != "pl.assemble" && name != "pl.tensor.assemble") return std::nullopt;
    py::module_ ast = py::module_::import("ast");
    py::object scope =
        ast.attr("parse")("with pl.at(level=pl.Level.CORE_GROUP, name_hint='assemble'):\n    pass").attr("body")[
            py::int_(0)];
    for (auto node : ast.attr("walk")(scope)) ast.attr("copy_location")(node, stmt);
    scope.attr("body") = py::list();
    scope.attr("body").attr("append")(stmt);
    return scope;
  }

  // `var = value` for a scalar: an integer constant is read as that constant from then on, and any
  // integer value is remembered for folding slice sizes (each assignment makes a new Var, so the
  // value is the only one `var` ever holds).
  void RecordScalar(const ir::VarPtr& var, const ir::ExprPtr& value) {
    const auto* scalar = var->type()->As<ir::ScalarType>();
    if (!scalar) return;
    if (auto known = ir::AsConstInt(value)) program_.known_ints[var->id()] = *known;
    if (ir::IsInteger(scalar->dtype())) program_.scalar_values[var->id()] = value;
  }

  ir::ExprPtr ScalarValue(const ir::Var& var) const {
    auto it = program_.scalar_values.find(var.id());
    return it == program_.scalar_values.end() ? nullptr : it->second;
  }

  // `pl.write(dst, [i, j], v)` as a statement. Into a tensor it is a store (an EvalStmt: the
  // tensor keeps its name); into a tile the tile's name then holds the written tile, which the
  // enclosing loops and ifs carry like any reassigned name.
  ir::Result<ir::StmtPtr> ParseElementWrite(py::handle stmt, py::handle call) {
    auto value = ParseExpr(call);
    if (!value) return pypto::unexpected(value.error());
    const ir::Span span = map_.SpanOf(stmt);
    const auto* write = (*value)->As<ir::Call>();
    const auto* dst = write && write->is_op_call() && write->op()->name == "tile.write"
                          ? write->args()[0]->As<ir::Var>()
                          : nullptr;
    if (!dst) return ir::StmtPtr(std::make_shared<ir::EvalStmt>(*value, span));
    auto var = std::make_shared<ir::Var>(dst->name_hint(), (*value)->type(), span);
    env_[dst->name_hint()] = var;
    return ir::StmtPtr(std::make_shared<ir::AssignStmt>(var, *value, span));
  }

  bool StoresInto(const ir::Expr& value, const std::string& name) const {
    const auto* call = value.As<ir::Call>();
    if (!call || !call->is_op_call() || !call->op()->writes_arg) return false;
    auto bound = env_.find(name);
    return bound != env_.end() && call->args()[*call->op()->writes_arg].get() == bound->second.get();
  }

  ir::Result<ir::StmtPtr> ParseAssign(py::handle stmt, bool annotated) {
    py::handle target = annotated ? stmt.attr("target") : py::handle(py::list(stmt.attr("targets"))[0]);
    if (!annotated && py::len(stmt.attr("targets")) != 1)
      return MakeError(DiagnosticKind::Syntax, "chained assignment is not supported", map_.SpanOf(stmt));
    if (IsNode(target, "Subscript") && !annotated && IsArray(target.attr("value")))
      return ParseArrayStore(stmt, target);
    if (IsNode(target, "Subscript") && !annotated) return ParseSliceAssign(stmt, target);
    if (!annotated && IsSubmit(stmt.attr("value"))) {
      std::vector<py::handle> targets;
      if (IsNode(target, "Tuple"))
        for (auto element : target.attr("elts")) targets.push_back(element);
      else
        targets.push_back(target);
      return ParseSubmit(stmt, stmt.attr("value"), std::move(targets));
    }
    if (!annotated && IsInlineCall(stmt.attr("value"))) return BindInlineResult(target, stmt.attr("value"));
    if (!annotated && IsNode(target, "Tuple") && IsCompareGather(stmt.attr("value")))
      return BindInlineResult(target, stmt.attr("value"));
    if (!annotated && IsNode(target, "Tuple") && IsNode(stmt.attr("value"), "Call"))
      return ParseMultiResultCall(stmt, target);
    if (!annotated && IsNode(target, "Tuple") && ShapeOf(stmt.attr("value"))) return ParseShapeUnpack(stmt, target);
    if (!IsNode(target, "Name"))
      return MakeError(DiagnosticKind::Syntax, "only assignment to a plain name or a tensor slice is supported yet",
                       map_.SpanOf(target));
    if (stmt.attr("value").is_none())
      return MakeError(DiagnosticKind::Syntax, "an annotation without a value declares nothing", map_.SpanOf(stmt));
    if (auto shaped = ParseRunTimeShapedTensor(target, stmt); !shaped)
      return pypto::unexpected(shaped.error());
    else if (*shaped)
      return *shaped;
    // `t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.tpop_from_aiv(id=0)`: a pop takes the shape and
    // dtype of the tile it receives from the annotation when it does not spell them.
    declared_tile_ = nullptr;
    if (annotated)
      if (auto declared = ResolveType(stmt.attr("annotation"), map_, source_.constants, &expr_resolver_))
        if ((*declared)->As<ir::TileType>()) declared_tile_ = *declared;
    auto value = ParseExpr(stmt.attr("value"));
    declared_tile_ = nullptr;
    if (!value) return pypto::unexpected(value.error());
    std::string name = target.attr("id").cast<std::string>();
    // `ctx = pld.get_comm_ctx(window)`: the name stands for the window (ParseCommCtx); no statement.
    if (IsNode(stmt.attr("value"), "Call") && IsGetCommCtx(DottedName(stmt.attr("value").attr("func"))))
      if (auto window = std::dynamic_pointer_cast<const ir::Var>(*value)) {
        env_[name] = window;
        unavailable_.erase(name);
        assigned_types_[name] = window->type();
        return ir::StmtPtr{};
      }
    // `out = pl.store(t, offs, out)` / `out = pl.assemble(out, t, offs)`: the store writes `out` in
    // place, so `out` keeps naming the same tensor; no new value (and no loop carry) is made.
    if (StoresInto(**value, name)) return ir::StmtPtr(std::make_shared<ir::EvalStmt>(*value, map_.SpanOf(stmt)));
    WarnOnMisboundResult(**value, name, map_.SpanOf(stmt));
    if (annotated) {
      auto typed = LiteralAsDeclared(*value, stmt.attr("annotation"));
      if (!typed) return pypto::unexpected(typed.error());
      value = *typed;
    }
    ir::TypePtr declared_type;
    const Constants constants = annotated ? AnnotationConstants() : Constants{};
    if (annotated && source_.signature) {
      // In a @pl.program the annotation is the variable's type (the printer writes every one, with
      // the tile's memref once memory is allocated); the value must agree with it.
      auto declared = ResolveType(stmt.attr("annotation"), map_, &constants, &expr_resolver_);
      if (!declared) return pypto::unexpected(declared.error());
      // A load of an N-d window into its row-merged 2-D tile (FlattenTileNdTo2D's output) is typed
      // by its annotation: the op deduces the window's own shape.
      if (const auto* load = (*value)->As<ir::Call>();
          load && load->target_name() == "tile.load" && TileRowMergedFrom(*declared, (*value)->type()))
        *value = ir::ExprPtr(std::make_shared<ir::Call>(load->op(), load->args(), load->kwargs(), *declared,
                                                        load->span()));
      const bool computed_tile = TileStandsForTensor(*declared, (*value)->type()) ||
                                 TileTakesValueSpace(stmt.attr("annotation"), *declared, (*value)->type());
      if (!computed_tile && !Assignable(*declared, (*value)->type()))
        return MakeError(DiagnosticKind::Type,
                         fmt::format("'{}' is declared {} but the value assigned is {}", name, (*declared)->str(),
                                     (*value)->type()->str()),
                         map_.SpanOf(stmt.attr("annotation")));
      declared_type = computed_tile ? (*value)->type() : WithValidShapeOf(*declared, (*value)->type());
    } else if (annotated)
      if (auto ok = CheckDeclaredType(stmt.attr("annotation"), name, (*value)->type(), map_, &constants); !ok)
        return pypto::unexpected(ok.error());
    return BindAssigned(target, stmt, declared_type ? declared_type : (*value)->type(), *value);
  }

  // `name = value` (`target` the name): a new variable of `type`, bound in the environment with what
  // later statements look up about it, and its AssignStmt.
  ir::StmtPtr BindAssigned(py::handle target, py::handle stmt, const ir::TypePtr& type, const ir::ExprPtr& value) {
    const std::string name = target.attr("id").cast<std::string>();
    auto var = std::make_shared<ir::Var>(name, type, map_.SpanOf(target));
    RecordReturnedArg(*var, *value);
    env_[name] = var;
    unavailable_.erase(name);
    assigned_types_[name] = var->type();
    RecordScalar(var, value);
    RecordOrchestrationSlice(*var, value);
    if (IsCreation(*value)) placeholders_.insert(var->id());
    return std::make_shared<ir::AssignStmt>(var, value, map_.SpanOf(stmt));
  }

  // `buf = pl.create_tensor([16, head_dim], ...)` / `qi = pl.slice(query, [16, head_dim], [row, 0])` in
  // orchestration code with a dimension read from a tensor (upstream's paged attention reads them
  // from a config tensor): the shape is known only when the program runs, and a tensor's type here is
  // static. Such a tensor exists to be handed to kernels, so it takes the shape of the parameter the
  // first call after it passes it to (a kernel reading fewer rows or columns than its parameter has is
  // the kernel's business, as on the device). Null when `stmt` makes no such tensor.
  ir::Result<ir::StmtPtr> ParseRunTimeShapedTensor(py::handle target, py::handle stmt) {
    const std::string name = target.attr("id").cast<std::string>();
    py::handle value = stmt.attr("value");
    if (kernel_depth_ > 0 || !IsNode(value, "Call")) return ir::StmtPtr{};
    const std::string callee = DottedName(value.attr("func"));
    const bool create = callee == "pl.create_tensor" || callee == "pl.tensor.create";
    const bool slice = callee == "pl.slice" || callee == "pl.tensor.slice";
    py::list args = value.attr("args");
    const size_t shape_index = create ? 0 : 1;
    if ((!create && !slice) || py::len(args) <= shape_index + (slice ? 1 : 0) || !IsNode(args[shape_index], "List"))
      return ir::StmtPtr{};
    bool run_time = false;
    for (auto element : args[shape_index].attr("elts")) {
      auto dim = ParseExpr(element);
      if (!dim) return pypto::unexpected(dim.error());
      run_time |= !ir::AsConstInt(*dim) && (*dim)->type()->As<ir::ScalarType>();
    }
    if (!run_time) return ir::StmtPtr{};
    const ir::Span span = map_.SpanOf(value);
    auto param = FirstParameterTaking(name, stmt);
    if (!param)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("'{}' has a shape known only at run time; such a tensor takes the shape of the "
                                   "kernel parameter it is passed to, and no function call after it passes '{}'",
                                   name, name),
                       span, "give it a shape of integer constants");
    py::module_ ast = py::module_::import("ast");
    py::list dims;
    for (int64_t dim : param->type.shape()) {
      dims.append(ast.attr("Constant")(dim));
      ast.attr("copy_location")(dims[dims.size() - 1], value);
    }
    py::object shape = ast.attr("List")(dims, ast.attr("Load")());
    ast.attr("copy_location")(shape, args[shape_index]);
    ir::Result<ir::ExprPtr> made = pypto::unexpected(ir::Diagnostic{});
    if (create) {
      std::vector<py::object> rewritten = {shape};
      for (size_t i = 1; i < py::len(args); ++i) rewritten.push_back(args[i]);
      made = ParseExpr(RewrittenCall(value, "pl.create_tensor", rewritten, value.attr("keywords")));
    } else {
      auto base = ParseExpr(args[0]);
      if (!base) return pypto::unexpected(base.error());
      auto offsets = ParseExpr(args[2]);
      if (!offsets) return pypto::unexpected(offsets.error());
      auto dims_expr = ParseExpr(shape);
      if (!dims_expr) return pypto::unexpected(dims_expr.error());
      auto call = ir::OpRegistry::Get().CreateCall("tensor.slice", {*base, *dims_expr, *offsets}, {}, span);
      if (call) made = ir::ExprPtr(*call);
      else made = pypto::unexpected(call.error());
    }
    if (!made)
      return MakeError(made.error().kind,
                       fmt::format("'{}' has a shape known only at run time, and takes the shape [{}] of {}: {}", name,
                                   fmt::join(param->type.shape(), ", "), param->where, made.error().message),
                       span);
    return BindAssigned(target, stmt, (*made)->type(), *made);
  }

  struct ParameterUse {
    const ir::TensorType& type;
    std::string where;  // "k() parameter 'x'"
  };

  // The tensor parameter of a function of the program that the first call after `stmt` (in source
  // order) passes the variable `name` to, positionally or by keyword.
  std::optional<ParameterUse> FirstParameterTaking(const std::string& name, py::handle stmt) {
    if (!program_.methods || !function_def_) return std::nullopt;
    const auto after = std::make_pair(stmt.attr("end_lineno").cast<int>(), stmt.attr("end_col_offset").cast<int>());
    std::optional<std::pair<int, int>> best;
    std::optional<ParameterUse> found;
    for (auto node : py::module_::import("ast").attr("walk")(function_def_)) {
      if (!IsNode(node, "Call")) continue;
      const auto at = std::make_pair(node.attr("lineno").cast<int>(), node.attr("col_offset").cast<int>());
      if (at < after || (best && *best < at)) continue;
      std::string callee = DottedName(node.attr("func"));
      if (callee.starts_with("self.")) callee = callee.substr(5);
      auto method = program_.methods->find(callee);
      if (method == program_.methods->end()) continue;
      const auto& params = method->second.params;
      auto take = [&](size_t i) {
        const auto* tensor = i < params.size() ? params[i]->type()->As<ir::TensorType>() : nullptr;
        if (!tensor) return;
        best = at;
        found.emplace(ParameterUse{*tensor, fmt::format("{}() parameter '{}'", callee, params[i]->name_hint())});
      };
      py::list positional = node.attr("args");
      for (size_t i = 0; i < py::len(positional); ++i)
        if (IsNode(positional[i], "Name") && positional[i].attr("id").cast<std::string>() == name) take(i);
      for (auto keyword : node.attr("keywords")) {
        if (keyword.attr("arg").is_none() || !IsNode(keyword.attr("value"), "Name") ||
            keyword.attr("value").attr("id").cast<std::string>() != name)
          continue;
        const std::string key = keyword.attr("arg").cast<std::string>();
        for (size_t i = 0; i < params.size(); ++i)
          if (params[i]->name_hint() == key) take(i);
      }
    }
    return found;
  }

  // The tensor or tile whose `.shape` `node` is; null for anything else.
  const ir::ShapedType* ShapeOf(py::handle node) const {
    if (!IsNode(node, "Attribute") || node.attr("attr").cast<std::string>() != "shape" ||
        !IsNode(node.attr("value"), "Name"))
      return nullptr;
    auto it = env_.find(node.attr("value").attr("id").cast<std::string>());
    if (it == env_.end()) return nullptr;
    const ir::Type& type = *it->second->type();
    if (const auto* tensor = type.As<ir::TensorType>()) return tensor;
    return type.As<ir::TileType>();
  }

  // `x.shape[i]`: extent i (negative counts from the end, as in Python).
  ir::Result<ir::ExprPtr> ParseShapeExtent(py::handle node) {
    const ir::Shape& shape = ShapeOf(node.attr("value"))->shape();
    const ir::Span span = map_.SpanOf(node);
    auto index = ParseExpr(node.attr("slice"));
    if (!index) return pypto::unexpected(index.error());
    const auto i = ir::AsConstInt(*index);
    const auto rank = static_cast<int64_t>(shape.size());
    if (!i || *i < -rank || *i >= rank)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("the index of a {}-d shape must be an integer constant in [{}, {})", rank, -rank,
                                   rank),
                       map_.SpanOf(node.attr("slice")));
    return ir::ExprPtr(std::make_shared<ir::ConstInt>(shape[*i < 0 ? *i + rank : *i], ir::DataType::INDEX, span));
  }

  // `[32, 16][i]` for a constant i: element i (negative counts from the end). A list the kernel names
  // from its enclosing scope is such a literal (`valid_shape[0]` with valid_shape = [32, 16]).
  ir::Result<ir::ExprPtr> ParseListElement(py::handle node) {
    auto list = ParseExpr(node.attr("value"));
    if (!list) return list;
    const auto& elements = (*list)->As<ir::TupleLiteral>()->elements();
    auto index = ParseExpr(node.attr("slice"));
    if (!index) return index;
    const auto i = ir::AsConstInt(*index);
    const auto size = static_cast<int64_t>(elements.size());
    if (!i || *i < -size || *i >= size)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("the index of a list of {} must be an integer constant in [{}, {})", size, -size,
                                   size),
                       map_.SpanOf(node.attr("slice")));
    return elements[*i < 0 ? *i + size : *i];
  }

  // `M, N = x.shape`: one assignment per name, `M = x.shape[0]`, ... (a constant each).
  ir::Result<ir::StmtPtr> ParseShapeUnpack(py::handle stmt, py::handle target) {
    py::module_ ast = py::module_::import("ast");
    py::list names = target.attr("elts");
    const size_t rank = ShapeOf(stmt.attr("value"))->shape().size();
    if (py::len(names) != rank)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("{} names unpack a {}-d shape", py::len(names), rank), map_.SpanOf(target));
    std::vector<ir::StmtPtr> assigns;
    for (size_t i = 0; i < rank; ++i) {
      py::object index = ast.attr("Constant")(i);
      ast.attr("copy_location")(index, stmt.attr("value"));
      py::object extent = ast.attr("Subscript")(stmt.attr("value"), index, ast.attr("Load")());
      ast.attr("copy_location")(extent, stmt.attr("value"));
      py::list targets;
      targets.append(names[i]);
      py::object assign = ast.attr("Assign")(targets, extent);
      ast.attr("copy_location")(assign, stmt);
      synthetic_nodes_.push_back(assign);
      auto parsed = ParseAssign(assign, /*annotated=*/false);
      if (!parsed) return parsed;
      Append(assigns, *parsed);
    }
    return Seq(std::move(assigns), map_.SpanOf(stmt));
  }

  // A tensor slice in orchestration code (`qi = pl.slice(query, [16, 128], [row, 0])`) is a load, which
  // OutlineIncoreScopes moves into the kernel scopes that read it; remembered here in case it is
  // passed to a function taking a tensor instead (SliceAsView).
  void RecordOrchestrationSlice(const ir::Var& var, const ir::ExprPtr& value) {
    const auto* load = value->As<ir::Call>();
    if (kernel_depth_ == 0 && load && load->is_op_call() && load->op()->name == "tile.load" &&
        load->args()[0]->type()->As<ir::TensorType>())
      orchestration_slices_[&var] = value;
  }

  // The loads of orchestration slices that were only passed to functions (as views, SliceAsView):
  // nothing reads them, so they are dropped rather than left for the passes to sink nowhere.
  ir::StmtPtr DropUnreadSliceLoads(const ir::StmtPtr& body) const {
    if (viewed_slices_.empty()) return body;
    struct Reads final : ir::IRVisitor {
      std::unordered_set<const ir::Var*> vars;
      void VisitVar(const std::shared_ptr<const ir::Var>& var) override { vars.insert(var.get()); }
    } reads;
    reads.VisitStmt(body);
    struct Dropper final : ir::IRMutator {
      std::unordered_set<const ir::Var*> unread;
      ir::StmtPtr MutateAssign(const std::shared_ptr<const ir::AssignStmt>& stmt) override {
        if (unread.contains(stmt->var().get()))
          return std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{}, stmt->span());
        return ir::IRMutator::MutateAssign(stmt);
      }
      ir::StmtPtr MutateSeq(const std::shared_ptr<const ir::SeqStmts>& seq) override {
        std::vector<ir::StmtPtr> kept;
        bool changed = false;
        for (const auto& child : seq->stmts()) {
          auto mutated = MutateStmt(child);
          changed |= mutated != child;
          const auto* dropped = mutated->As<ir::SeqStmts>();
          if (mutated != child && dropped && dropped->stmts().empty()) continue;
          kept.push_back(std::move(mutated));
        }
        return changed ? std::make_shared<ir::SeqStmts>(std::move(kept), seq->span()) : seq;
      }
    } dropper;
    for (const ir::Var* slice : viewed_slices_)
      if (!reads.vars.contains(slice)) dropper.unread.insert(slice);
    return dropper.unread.empty() ? body : dropper.MutateStmt(body);
  }

  // The ops that view a whole tensor in orchestration code (the same buffer, another shape or axis order).
  static bool IsViewOfWhole(const std::string& name) {
    return name == "pl.reshape" || name == "pl.tensor.reshape" || name == "pl.transpose" ||
           name == "pl.tensor.transpose";
  }

  // An orchestration slice whose window runs past the end of the tensor's outermost dimension
  // (`pl.slice(block_table, [64], [row])` of a 32-entry table, of which the kernel reads only the
  // entries it counts) cannot be a load, but it is a valid view, as the runtime's view() allows:
  // the kernel is checked when it touches an element past the buffer. `load` is the load the slice
  // was rewritten to; nothing when a view does not type-check either (the load's error stands).
  std::optional<ir::ExprPtr> OverhangingSliceView(py::handle load) {
    if (py::len(load.attr("keywords")) != 0 || py::len(load.attr("args")) != 3) return std::nullopt;
    py::list args = load.attr("args");
    auto tensor = ParseExpr(args[0]);
    auto offsets = ParseArgValue(args[1]);
    auto shape = ParseArgValue(args[2]);
    if (!tensor || !offsets || !shape) return std::nullopt;
    const auto* offsets_expr = std::get_if<ir::ExprPtr>(&*offsets);
    const auto* shape_expr = std::get_if<ir::ExprPtr>(&*shape);
    if (!offsets_expr || !shape_expr) return std::nullopt;
    auto view = ir::OpRegistry::Get().CreateCall("tensor.slice", {*tensor, *shape_expr, *offsets_expr}, {},
                                                 map_.SpanOf(load));
    if (!view) return std::nullopt;
    return *view;
  }

  // An orchestration slice passed to a function's tensor parameter is a view of that window of the
  // tensor (tensor.slice, the runtime's view()), defined just before the call: the kernel reads and
  // writes the tensor's elements in place.
  // A slice written in the call itself (`f(src[0:32], c)`) is a view named after its tensor.
  ir::Result<ir::ExprPtr> SliceAsView(const ir::ExprPtr& arg) {
    const auto* var = arg->As<ir::Var>();
    auto it = var ? orchestration_slices_.find(var) : orchestration_slices_.end();
    const ir::Call* load = it != orchestration_slices_.end() ? it->second->As<ir::Call>() : nullptr;
    if (!load && !var && kernel_depth_ == 0) {
      load = arg->As<ir::Call>();
      if (!load || !load->is_op_call() || load->op()->name != "tile.load" ||
          !load->args()[0]->type()->As<ir::TensorType>())
        load = nullptr;
    }
    if (!load) return arg;
    auto view = ir::OpRegistry::Get().CreateCall("tensor.slice", {load->args()[0], load->args()[2], load->args()[1]},
                                                 {}, load->span());
    if (!view) return pypto::unexpected(view.error());
    const auto* source = load->args()[0]->As<ir::Var>();
    const std::string name = var ? var->name_hint() : (source ? source->name_hint() : "tensor") + "_view";
    auto view_var = std::make_shared<ir::Var>(name, (*view)->type(), var ? var->span() : load->span());
    prelude_.push_back(std::make_shared<ir::AssignStmt>(view_var, *view, load->span()));
    if (var) viewed_slices_.insert(var);
    return ir::ExprPtr(view_var);
  }

  // `out = self.k(x, out)`: a function of the program returns its output parameter, so the result is
  // the very tensor passed for it (when the function has one output of the result's type). An
  // orchestration loop doing this updates `out` in place, as one whose kernel scope stores into it.
  void RecordReturnedArg(const ir::Var& result, const ir::Expr& value) {
    const auto* call = value.As<ir::Call>();
    if (!call || call->is_op_call() || !program_.methods || !result.type()->As<ir::TensorType>()) return;
    auto callee = program_.methods->find(call->callee());
    if (callee == program_.methods->end()) return;
    const ir::Var* returned = nullptr;
    for (size_t i = 0; i < callee->second.directions.size() && i < call->args().size(); ++i) {
      if (callee->second.directions[i] == ir::ParamDirection::In) continue;
      const auto* arg = call->args()[i]->As<ir::Var>();
      if (returned || !arg || !arg->type()->equals(*result.type())) return;  // not exactly one such output
      returned = arg;
    }
    if (returned) returned_args_[&result] = returned;
  }

  // Whether `value` is `tensor` updated in place: through stores (`aliases`) and through calls that
  // return the tensor passed to them.
  bool IsInPlaceUpdateOf(const ir::Var* value, const ir::Var* tensor, const ir::TensorAliases& aliases) const {
    return InPlaceRoot(value, aliases) == InPlaceRoot(tensor, aliases);
  }

  // The tensor `value` names once in-place updates are seen through: stores and assembles
  // (`aliases`), and calls of the program's functions that return the tensor passed for their output.
  const ir::Var* InPlaceRoot(const ir::Var* value, const ir::TensorAliases& aliases) const {
    for (const ir::Var* var = aliases.Root(value);; var = aliases.Root(var)) {
      auto it = returned_args_.find(var);
      if (it == returned_args_.end()) return var;
      var = it->second;
    }
  }

  // A tile annotation that spells no valid region (`t: pl.Tile[[m, n], dt] = pl.load(...,
  // valid_shape=v)`) keeps the region of the value: the annotation states the tile's extents, and
  // the load still fills only part of it.
  static ir::TypePtr WithValidShapeOf(const ir::TypePtr& declared, const ir::TypePtr& value) {
    const auto* tile = declared->As<ir::TileType>();
    const auto* value_tile = value->As<ir::TileType>();
    if (!tile || !value_tile || tile->has_partial_valid_shape() || !value_tile->has_partial_valid_shape())
      return declared;
    return std::make_shared<ir::TileType>(tile->shape(), tile->dtype(), tile->memory_space(), tile->memref(),
                                          value_tile->valid_shape());
  }

  // What a variable annotation may name: the constants, and the integer variables whose value is
  // known at compile time (`d = pl.tensor.dim(q, 1)` makes `pl.Tensor[[16, d], pl.FP32]` a shape).
  Constants AnnotationConstants() const {
    Constants constants = *source_.constants;
    for (const auto& [name, var] : env_)
      if (auto known = program_.known_ints.find(var->id()); known != program_.known_ints.end())
        constants[name] = known->second;
    return constants;
  }

  // `n: pl.Scalar[pl.INT64] = 0`: an integer literal takes the integer dtype its annotation declares
  // (an unannotated one is INDEX); anything else is returned as it is, for the type check.
  ir::Result<ir::ExprPtr> LiteralAsDeclared(const ir::ExprPtr& value, py::handle annotation) {
    if (!IsNode(annotation, "Subscript") || DottedName(annotation.attr("value")) != "pl.Scalar") return value;
    auto declared = ResolveType(annotation, map_, source_.constants);
    const auto* scalar = declared ? (*declared)->As<ir::ScalarType>() : nullptr;
    if (!scalar || !ir::IsInteger(scalar->dtype())) return value;
    const auto* literal = value->As<ir::ConstInt>();
    if (!literal) return IntegerAsDeclared(value, scalar->dtype());
    if (scalar->dtype() == ir::DataType::INDEX) return value;
    const int64_t v = literal->value();
    const auto [lowest, highest] = ir::IntegerRange(scalar->dtype());
    if (v < lowest || v > highest)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("{} does not fit in pl.{}", v, ir::DataTypeName(scalar->dtype())),
                       value->span());
    return ir::ExprPtr(std::make_shared<ir::ConstInt>(v, scalar->dtype(), value->span()));
  }

  // `n: pl.Scalar[pl.INT64] = (seq + block - 1) // block` with `seq` an INT32 element: an integer
  // value of another integer dtype is converted to the declared one, as the annotation asks.
  static ir::Result<ir::ExprPtr> IntegerAsDeclared(const ir::ExprPtr& value, ir::DataType dtype) {
    const auto* actual = value->type()->As<ir::ScalarType>();
    if (!actual || !ir::IsInteger(actual->dtype()) || actual->dtype() == dtype ||
        actual->dtype() == ir::DataType::INDEX || dtype == ir::DataType::INDEX)
      return value;
    auto cast = ir::OpRegistry::Get().CreateCall("scalar.cast", {value}, {{"target_type", ir::OpAttr(dtype)}},
                                                 value->span());
    if (!cast) return pypto::unexpected(cast.error());
    return ir::ExprPtr(*cast);
  }

  // A tensor region written as slices, `x[r : r + 128, c : c + 256]`: its offsets and static shape.
  // The sliced value is any tensor or tile, `pl.concat(a, b)[0:16, :]` too.
  struct Region {
    ir::ExprPtr source;
    std::vector<ir::ExprPtr> offsets;
    ir::Shape shape;
  };

  // `for_load`: the region is read (a load), which orchestration code may do too: OutlineIncoreScopes
  // moves such a load into the kernels that use the tile (sink_tensor_reads.h).
  ir::Result<Region> ParseRegion(py::handle subscript, bool for_load = false) {
    const ir::Span span = map_.SpanOf(subscript);
    auto base = ParseExpr(subscript.attr("value"));
    if (!base) return pypto::unexpected(base.error());
    const auto* tensor = (*base)->type()->As<ir::TensorType>();
    const auto* tile = (*base)->type()->As<ir::TileType>();  // `t[:, a:b]`: a window of a tile
    if (!(tensor || tile))
      return MakeError(DiagnosticKind::Type,
                       fmt::format("only tensors and tiles can be sliced here, got {}", (*base)->type()->str()), span);
    if (kernel_depth_ == 0 && !(for_load && tensor))
      return MakeError(DiagnosticKind::Syntax, "tensor slices outside a pl.at scope are read only", span,
                       "assign into tensors inside the kernel's pl.at scope, where a slice assignment is a store");
    py::handle slice = subscript.attr("slice");
    std::vector<py::handle> items;
    if (IsNode(slice, "Tuple")) {
      for (auto item : slice.attr("elts")) items.push_back(item);
    } else {
      items.push_back(slice);
    }
    const auto& dims = tensor ? tensor->shape() : tile->shape();
    if (items.size() > dims.size())
      return MakeError(DiagnosticKind::Type,
                       fmt::format("{} indices for a tensor of rank {}", items.size(), dims.size()), span);
    Region region{.source = *base};
    auto index = [&](int64_t v) { return std::make_shared<ir::ConstInt>(v, ir::DataType::INDEX, span); };
    for (size_t d = 0; d < dims.size(); ++d) {
      if (d >= items.size()) {  // fewer indices imply the whole of the trailing dimensions
        region.offsets.push_back(index(0));
        region.shape.push_back(dims[d]);
        continue;
      }
      py::handle item = items[d];
      if (!IsNode(item, "Slice"))
        return MakeError(DiagnosticKind::Syntax, "only slices (start:stop) are supported as tensor indices yet",
                         map_.SpanOf(item));
      if (!item.attr("step").is_none())
        return MakeError(DiagnosticKind::Syntax, "slices with a step are not supported", map_.SpanOf(item));
      ir::ExprPtr lower = index(0), upper = index(dims[d]);
      if (!item.attr("lower").is_none()) {
        auto parsed = ParseExpr(item.attr("lower"));
        if (!parsed) return pypto::unexpected(parsed.error());
        lower = *parsed;
      }
      if (!item.attr("upper").is_none()) {
        auto parsed = ParseExpr(item.attr("upper"));
        if (!parsed) return pypto::unexpected(parsed.error());
        upper = *parsed;
      }
      auto extent = StaticExtent(lower, upper);
      if (!extent)
        return MakeError(DiagnosticKind::Type,
                         fmt::format("the slice {}:{} must have a size known at compile time", ir::PrintExpr(lower),
                                     ir::PrintExpr(upper)),
                         map_.SpanOf(item), "write it as start:start + SIZE with a constant SIZE");
      region.offsets.push_back(lower);
      region.shape.push_back(*extent);
    }
    return region;
  }

  // upper - lower when it is a constant, seeing through the scalars the bounds were computed from:
  // `ki * 128 : (ki + 1) * 128`, or `c0 : c1` after `c1 = c0 + 32`.
  std::optional<int64_t> StaticExtent(const ir::ExprPtr& lower, const ir::ExprPtr& upper) const {
    return ConstantDifference(upper, lower, [this](const ir::Var& var) { return ScalarValue(var); });
  }

  ir::ExprPtr Tuple(const std::vector<ir::ExprPtr>& values, const ir::Span& span) {
    return std::make_shared<ir::TupleLiteral>(values, span);
  }

  // ---- arrays (pl.array.create) ------------------------------------------------------------------
  // `tids[i]` reads an element (pl.array.get_element) and `tids[i] = tid` replaces one: the name then
  // holds the updated array (pl.array.update_element), which a loop carries like any reassigned name.
  bool IsArray(py::handle node) const {
    if (!IsNode(node, "Name")) return false;
    auto it = env_.find(node.attr("id").cast<std::string>());
    return it != env_.end() && it->second->type()->As<ir::ArrayType>();
  }

  ir::Result<ir::ExprPtr> ParseArrayLoad(py::handle node) {
    auto array = ParseExpr(node.attr("value"));
    if (!array) return array;
    auto index = ParseExpr(node.attr("slice"));
    if (!index) return index;
    auto call = ir::OpRegistry::Get().CreateCall("array.get_element", {*array, *index}, {}, map_.SpanOf(node));
    if (!call) return pypto::unexpected(call.error());
    return ir::ExprPtr(*call);
  }

  ir::Result<ir::StmtPtr> ParseArrayStore(py::handle stmt, py::handle target) {
    auto array = ParseExpr(target.attr("value"));
    if (!array) return pypto::unexpected(array.error());
    auto index = ParseExpr(target.attr("slice"));
    if (!index) return pypto::unexpected(index.error());
    auto value = ParseExpr(stmt.attr("value"));
    if (!value) return pypto::unexpected(value.error());
    const ir::Span span = map_.SpanOf(stmt);
    auto call = ir::OpRegistry::Get().CreateCall("array.update_element", {*array, *index, *value}, {}, span);
    if (!call) return pypto::unexpected(call.error());
    const std::string name = target.attr("value").attr("id").cast<std::string>();
    auto var = std::make_shared<ir::Var>(name, (*call)->type(), map_.SpanOf(target));
    env_[name] = var;
    return ir::StmtPtr(std::make_shared<ir::AssignStmt>(var, *call, span));
  }

  // `tile = x[r : r + 128, c : c + 256]` inside a kernel: a load of that region; `t[:, a:b]` of a
  // tile is a tile.slice, a copy of that window.
  ir::Result<ir::ExprPtr> ParseSliceLoad(py::handle node) {
    auto region = ParseRegion(node, /*for_load=*/true);
    if (!region) return pypto::unexpected(region.error());
    const ir::Span span = map_.SpanOf(node);
    std::vector<ir::ExprPtr> shape;
    for (int64_t dim : region->shape) shape.push_back(std::make_shared<ir::ConstInt>(dim, ir::DataType::INDEX, span));
    if (region->source->type()->As<ir::TileType>()) {
      auto call = ir::OpRegistry::Get().CreateCall(
          "tile.slice", {region->source, Tuple(shape, span), Tuple(region->offsets, span)}, {}, span);
      if (!call) return pypto::unexpected(call.error());
      return ir::ExprPtr(*call);
    }
    auto call = ir::OpRegistry::Get().CreateCall(
        "tile.load", {region->source, Tuple(region->offsets, span), Tuple(shape, span)}, {}, span);
    if (!call) return pypto::unexpected(call.error());
    return ir::ExprPtr(*call);
  }

  // `y[r : r + 128, c : c + 256] = tile` inside a kernel: a store of the tile into that region.
  ir::Result<ir::StmtPtr> ParseSliceAssign(py::handle stmt, py::handle target) {
    auto region = ParseRegion(target);
    if (!region) return pypto::unexpected(region.error());
    if (!region->source->As<ir::Var>() || !IsNode(target.attr("value"), "Name"))
      return MakeError(DiagnosticKind::Syntax, "only a tensor or tile named by a variable can be assigned into",
                       map_.SpanOf(target.attr("value")), "give the value a name first");
    const bool into_tile = region->source->type()->As<ir::TileType>();
    auto value = ParseExpr(stmt.attr("value"));
    if (!value) return pypto::unexpected(value.error());
    const ir::Span span = map_.SpanOf(stmt);
    const auto* tile = (*value)->type()->As<ir::TileType>();
    if (!tile)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("a {} slice is assigned a tile, got {}", into_tile ? "tile" : "tensor",
                                   (*value)->type()->str()),
                       map_.SpanOf(stmt.attr("value")));
    if (auto through = WrittenThroughRegion(*region, span)) {
      if (!*through) return pypto::unexpected(through->error());
      *region = std::move(**through);
    }
    if (region->source->type()->As<ir::TileType>()) return AssignTileWindow(stmt, target, *region, *value);
    // A tile whose valid region is the slice (`out[:, 0:4] = narrowed`, narrowed [16, 8] with valid
    // [16, 4]) stores that region: the store writes a tile's valid part only.
    if (tile->shape() != region->shape && StaticValidShape(*tile) != region->shape)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("the slice has shape [{}] but the tile assigned to it is {}",
                                   fmt::join(region->shape, ", "), tile->str()),
                       span);
    auto call = ir::OpRegistry::Get().CreateCall("tile.store", {*value, Tuple(region->offsets, span), region->source},
                                                 {}, span);
    if (!call) return pypto::unexpected(call.error());
    return ir::StmtPtr(std::make_shared<ir::EvalStmt>(*call, span));
  }

  // A tile's valid region when every extent of it is a constant; its shape when it has none.
  static ir::Shape StaticValidShape(const ir::TileType& tile) {
    if (!tile.has_partial_valid_shape()) return tile.shape();
    ir::Shape valid;
    for (const auto& extent : tile.valid_shape()) {
      auto constant = ir::AsConstInt(extent);
      if (!constant) return {};
      valid.push_back(*constant);
    }
    return valid;
  }

  // `h_tile[:, k : k + 512] = q` inside a kernel, where `h_tile = h[r : r + 16]` is a slice taken in
  // orchestration code: the slice is a view of h there (as upstream has it), so the assignment writes
  // h itself, at the slice's offsets plus the window's: the region of h this returns, which the
  // assignment stores into like any tensor's. (The slice is a load only where it is read.) Nothing
  // when the target is not such a slice. A later read of the slice in the same kernel would see the
  // values loaded before this write, so it is refused (StaleSliceRead).
  std::optional<ir::Result<Region>> WrittenThroughRegion(const Region& window, const ir::Span& span) {
    const auto* var = window.source->As<ir::Var>();
    auto it = var && kernel_depth_ > 0 ? orchestration_slices_.find(var) : orchestration_slices_.end();
    if (it == orchestration_slices_.end()) return std::nullopt;
    const auto* load = it->second->As<ir::Call>();
    const auto* slice_offsets = load->args()[1]->As<ir::TupleLiteral>();
    if (!slice_offsets || slice_offsets->elements().size() != window.offsets.size()) return std::nullopt;
    Region region{.source = load->args()[0], .shape = window.shape};
    for (size_t d = 0; d < window.offsets.size(); ++d) {
      const ir::ExprPtr& base = slice_offsets->elements()[d];
      auto sum = ir::AsConstInt(window.offsets[d]) == 0 ? ir::Result<ir::ExprPtr>(base)
                 : ir::AsConstInt(base) == 0           ? ir::Result<ir::ExprPtr>(window.offsets[d])
                                                       : ir::MakeBinary(ir::BinaryOp::Add, base, window.offsets[d], span);
      if (!sum) return pypto::unexpected(sum.error());
      region.offsets.push_back(*sum);
    }
    viewed_slices_.insert(var);  // its load is dropped if nothing reads it
    written_through_.insert(var);
    return region;
  }

  // `t[a:b, :] = u` with a tile `t`: `t = pl.tile.assemble(t, u, [a, 0])`, u written into that window
  // of t in place. The name is rebound like any assignment, so a loop or branch carries the new t.
  ir::Result<ir::StmtPtr> AssignTileWindow(py::handle stmt, py::handle target, const Region& window,
                                           const ir::ExprPtr& value) {
    const std::string name = target.attr("value").attr("id").cast<std::string>();
    const auto* tile = value->type()->As<ir::TileType>();
    if (tile->shape() != window.shape)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("the window of '{}' has shape [{}] but the tile assigned to it has shape [{}]",
                                   name, fmt::join(window.shape, ", "),
                                   fmt::join(tile->shape(), ", ")),
                       map_.SpanOf(target), "slice the window to the assigned tile's shape");
    const ir::Span span = map_.SpanOf(stmt);
    auto call = ir::OpRegistry::Get().CreateCall("tile.assemble",
                                                 {window.source, value, Tuple(window.offsets, span)}, {}, span);
    if (!call) return pypto::unexpected(call.error());
    auto var = std::make_shared<ir::Var>(name, (*call)->type(), map_.SpanOf(target));
    env_[name] = var;
    unavailable_.erase(name);
    assigned_types_[name] = var->type();
    return ir::StmtPtr(std::make_shared<ir::AssignStmt>(var, *call, span));
  }

  // `target = pl.assemble(target, source, offset)` inside a kernel writes the tile `source` into the
  // tensor `target` at `offset`: the store `pl.store(source, offset, target)`, whose value is the
  // tensor. The call is rewritten as that store, keeping the user's argument nodes, so its checks
  // point at the user's arguments (their messages name pl.store).
  ir::Result<ir::ExprPtr> ParseAssemble(py::handle node) {
    const std::string name = DottedName(node.attr("func"));
    const ir::Span span = map_.SpanOf(node.attr("func"));
    if (kernel_depth_ == 0)
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("'{}' outside a kernel (a tensor-to-tensor copy in orchestration) is not supported "
                                   "yet",
                                   name),
                       span, "assemble inside a pl.at scope, where it stores a tile into the tensor");
    std::vector<py::object> args(3);
    py::list store_keywords;
    py::module_ ast = py::module_::import("ast");
    const char* const kNames[] = {"target", "source", "offset"};
    py::list positional = node.attr("args");
    if (py::len(positional) > 3)
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("'{}' takes at most 3 arguments, got {}", name, py::len(positional)), span);
    for (size_t i = 0; i < py::len(positional); ++i) args[i] = positional[i];
    for (auto keyword : node.attr("keywords")) {
      const std::string key = keyword.attr("arg").is_none() ? "**" : keyword.attr("arg").cast<std::string>();
      if (key == "atomic") {
        auto atomic = AtomicKeyword(name, keyword.attr("value"));
        if (!atomic) return pypto::unexpected(atomic.error());
        if (*atomic) store_keywords.append(ast.attr("keyword")("atomic", **atomic));
        continue;
      }
      auto slot = std::find(std::begin(kNames), std::end(kNames), key);
      if (slot == std::end(kNames))
        return MakeError(DiagnosticKind::InvalidOperation,
                         fmt::format("'{}' has no argument '{}' (arguments: target, source, offset, atomic)", name, key),
                         map_.SpanOf(keyword.attr("value")));
      args[slot - std::begin(kNames)] = keyword.attr("value");
    }
    for (size_t i = 0; i < 3; ++i)
      if (!args[i]) return MakeError(DiagnosticKind::InvalidOperation, fmt::format("'{}' needs {}", name, kNames[i]), span);
    auto target = ParseExpr(args[0]);
    if (!target) return pypto::unexpected(target.error());
    if ((*target)->type()->As<ir::TileType>()) return ParseTileAssemble(name, *target, args, store_keywords, span);
    return ParseCall(RewrittenCall(node, "pl.store", {args[1], args[2], args[0]}, store_keywords));
  }

  // `target = pl.assemble(target, source, offset)` with a tile target writes the tile `source` into a
  // window of it, in place (tile.assemble); a whole tensor given as the source is loaded first.
  ir::Result<ir::ExprPtr> ParseTileAssemble(const std::string& name, const ir::ExprPtr& target,
                                            const std::vector<py::object>& args, const py::list& store_keywords,
                                            const ir::Span& span) {
    if (py::len(store_keywords) > 0)
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("'{}' into a tile cannot be atomic; an atomic add writes a tensor", name), span);
    if (const auto* slice = target->As<ir::Var>(); slice && orchestration_slices_.contains(slice)) {
      const auto* tensor = orchestration_slices_.at(slice)->As<ir::Call>()->args()[0]->As<ir::Var>();
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("'{}' into '{}', a slice orchestration code took, would write only this kernel's "
                                   "copy of it, never '{}'",
                                   name, slice->name_hint(), tensor ? tensor->name_hint() : "its tensor"),
                       span,
                       fmt::format("assign the window instead ({}[...] = tile), which writes the tensor",
                                   slice->name_hint()));
    }
    auto source = ParseExpr(args[1]);
    if (!source) return pypto::unexpected(source.error());
    if ((*source)->type()->As<ir::TensorType>()) {  // a whole tensor written into the tile is loaded first
      source = LoadWhole(*source, map_.SpanOf(args[1]));
      if (!source) return pypto::unexpected(source.error());
    }
    if (auto moved = MovedToVecForAssemble(*source, target, span); !moved) return moved;
    else source = *moved;
    auto offset = ParseExpr(args[2]);
    if (!offset) return pypto::unexpected(offset.error());
    auto call = ir::OpRegistry::Get().CreateCall("tile.assemble", {target, *source, *offset}, {}, span);
    if (!call) return pypto::unexpected(call.error());
    return ir::ExprPtr(*call);
  }

  // A matmul result (Acc) written into a vector tile: upstream's tensor-level assemble takes any
  // tile, so the result is moved into the vector buffer first (on a2a3 the mixed-kernel expansion
  // turns that move into the cube-to-vector handoff).
  ir::Result<ir::ExprPtr> MovedToVecForAssemble(const ir::ExprPtr& source, const ir::ExprPtr& target,
                                                const ir::Span& span) {
    const auto* from = source->type()->As<ir::TileType>();
    const auto* into = target->type()->As<ir::TileType>();
    if (!from || !into || from->memory_space() != ir::MemorySpace::Acc || into->memory_space() != ir::MemorySpace::Vec)
      return source;
    auto move = ir::OpRegistry::Get().CreateCall("tile.move", {source},
                                                 {{"target_memory", ir::OpAttr(ir::MemorySpace::Vec)}}, span);
    if (!move) return pypto::unexpected(move.error());
    auto moved = std::make_shared<ir::Var>("assembled_acc", (*move)->type(), span);
    prelude_.push_back(std::make_shared<ir::AssignStmt>(moved, *move, span));
    return ir::ExprPtr(moved);
  }

  static bool HasKeyword(py::handle call, const std::string& key) {
    for (auto keyword : call.attr("keywords"))
      if (!keyword.attr("arg").is_none() && keyword.attr("arg").cast<std::string>() == key) return true;
    return false;
  }

  // `pl.slice(tensor, shape, offset, valid_shape=...)` inside a kernel reads that region into a tile:
  // the load `pl.load(tensor, offset, shape, valid_shape=...)`, written with the user's argument nodes
  // so its checks point at them. Nothing (nullopt) when the first argument is a tile: that is
  // tile.slice.
  ir::Result<std::optional<py::object>> SliceOfTensorAsLoad(py::handle node) {
    const std::string name = DottedName(node.attr("func"));
    py::list positional = node.attr("args");
    if (py::len(positional) == 0) return std::optional<py::object>();
    auto source = ParseExpr(positional[0]);
    if (!source) return pypto::unexpected(source.error());
    if (!(*source)->type()->As<ir::TensorType>()) return std::optional<py::object>();
    const char* const kNames[] = {"x", "shape", "offset"};
    std::vector<py::object> args(3);
    if (py::len(positional) > 3)
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("'{}' takes at most 3 positional arguments, got {}", name, py::len(positional)),
                       map_.SpanOf(node.attr("func")));
    for (size_t i = 0; i < py::len(positional); ++i) args[i] = positional[i];
    py::list load_keywords;
    for (auto keyword : node.attr("keywords")) {
      const std::string key = keyword.attr("arg").is_none() ? "**" : keyword.attr("arg").cast<std::string>();
      if (key == "valid_shape") {
        load_keywords.append(keyword);
        continue;
      }
      auto slot = std::find(std::begin(kNames), std::end(kNames), key);
      if (slot == std::end(kNames))
        return MakeError(DiagnosticKind::InvalidOperation,
                         fmt::format("'{}' of a tensor inside a kernel has no argument '{}' (arguments: x, shape, "
                                     "offset, valid_shape)",
                                     name, key),
                         map_.SpanOf(keyword.attr("value")));
      args[slot - std::begin(kNames)] = keyword.attr("value");
    }
    for (size_t i = 1; i < 3; ++i)
      if (!args[i])
        return MakeError(DiagnosticKind::InvalidOperation, fmt::format("'{}' needs {}", name, kNames[i]),
                         map_.SpanOf(node.attr("func")));
    return std::optional<py::object>(RewrittenCall(node, "pl.load", {args[0], args[2], args[1]}, load_keywords));
  }

  // pl.read / pl.write in any of their spellings.
  static bool IsElementAccess(std::string_view name) {
    for (std::string_view prefix : {"pl.", "pl.tensor.", "pl.tile."})
      if (name.starts_with(prefix) && (name.substr(prefix.size()) == "read" || name.substr(prefix.size()) == "write"))
        return true;
    return false;
  }

  static bool IsElementWrite(py::handle node) {
    if (!IsNode(node, "Call")) return false;
    const std::string name = DottedName(node.attr("func"));
    return IsElementAccess(name) && name.ends_with(".write");
  }

  // `pl.create_tensor(shape, dtype=...)` inside a kernel: a kernel computes on tiles, so the tensor is
  // a Vec tile of that shape, as upstream's tensor-to-tile conversion makes it: pl.create_tile, or
  // pl.full(shape, dtype=..., value=v) with init_value=v. manual_dep, an opt-out of the runtime's
  // tracking of tensors between tasks, means nothing for a tile and is dropped.
  static py::object CreatedTensorAsTile(py::handle call) {
    py::module_ ast = py::module_::import("ast");
    py::list keywords;
    py::object init;
    for (auto keyword : call.attr("keywords")) {
      const py::object arg = keyword.attr("arg");
      const std::string key = arg.is_none() ? "" : arg.cast<std::string>();
      if (key == "init_value") {
        init = py::reinterpret_borrow<py::object>(keyword.attr("value"));
      } else if (key != "manual_dep") {
        keywords.append(keyword);
      }
    }
    std::vector<py::object> args;
    for (auto arg : call.attr("args")) args.push_back(py::reinterpret_borrow<py::object>(arg));
    if (!init) return RewrittenCall(call, "pl.create_tile", args, keywords);
    py::object value = ast.attr("keyword")("value", init);
    ast.attr("copy_location")(value, init);
    keywords.append(value);
    return RewrittenCall(call, "pl.full", args, keywords);
  }

  // `pl.read(t, i)` / `pl.write(t, i, v)`: one index not in a list, as upstream accepts for a 1-D
  // tensor.
  static bool HasBareIndex(py::handle call) {
    py::list args = call.attr("args");
    return py::len(args) >= 2 && !IsNode(args[1], "List") && !IsNode(args[1], "Tuple");
  }

  // The same call with its second argument `i` written `[i]`.
  static py::object WithIndexList(py::handle call) {
    py::module_ ast = py::module_::import("ast");
    py::list args = call.attr("args");
    py::list elements;
    elements.append(args[1]);
    py::object indices = ast.attr("List")(elements, ast.attr("Load")());
    ast.attr("copy_location")(indices, args[1]);
    py::list new_args;
    for (size_t i = 0; i < py::len(args); ++i) new_args.append(i == 1 ? indices : py::object(args[i]));
    py::object rewritten = ast.attr("Call")(call.attr("func"), new_args, call.attr("keywords"));
    ast.attr("copy_location")(rewritten, call);
    return rewritten;
  }

  // The store keyword value for `atomic=`: "add" for pl.AtomicType.Add, none for pl.AtomicType.None_
  // or None (a plain store).
  ir::Result<std::optional<py::object>> AtomicKeyword(const std::string& name, py::handle value) {
    std::string kind = DottedName(value);
    if (kind.starts_with("pld.AtomicType.")) kind = "pl." + kind.substr(4);  // the distributed DSL's spelling
    if (kind == "pl.AtomicType.Add") {
      py::object text = py::module_::import("ast").attr("Constant")("add");
      py::module_::import("ast").attr("copy_location")(text, value);
      return std::optional<py::object>(text);
    }
    if (kind == "pl.AtomicType.None_" || (IsNode(value, "Constant") && value.attr("value").is_none()))
      return std::optional<py::object>();
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("'{}' atomic= takes pl.AtomicType.Add or pl.AtomicType.None_", name),
                     map_.SpanOf(value));
  }

  // ---- pl.dump_tag -------------------------------------------------------------------------------
  // `pl.dump_tag(t)` marks the orchestration tensor variable t for the args dump: codegen-orch flags t
  // in every later submit (the variable, not its buffer: a reshape of t is another variable). The IR
  // keeps it as the statement `pl.tensor.dump_tag(t)`, which is how the printer writes it back.

  static bool IsDumpTag(py::handle node) {
    if (!IsNode(node, "Call")) return false;
    const std::string name = DottedName(node.attr("func"));
    return name == "pl.dump_tag" || name == "pl.tensor.dump_tag";
  }

  ir::Result<ir::StmtPtr> ParseDumpTag(py::handle call) {
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

  // `optimizations=[pl.split(mode), pl.cross_core_slot(...)]` are performance hints for a mixed
  // scope. The simulator splits every scope that mixes cube and vector work into an AIC and an AIV
  // kernel (SplitMixedScopes), so the hints are checked for spelling and otherwise not recorded.
  ir::Result<bool> CheckScopeOptimizations(py::handle value) {
    if (!IsNode(value, "List") && !IsNode(value, "Tuple"))
      return MakeError(DiagnosticKind::Syntax, "pl.at(optimizations=...) takes a list such as [pl.split(...)]",
                       map_.SpanOf(value));
    for (auto item : value.attr("elts")) {
      const std::string callee = IsNode(item, "Call") ? DottedName(item.attr("func")) : "";
      if (callee != "pl.split" && callee != "pl.cross_core_slot")
        return MakeError(DiagnosticKind::Syntax,
                         "only pl.split(...) and pl.cross_core_slot(...) are supported in pl.at(optimizations=...)",
                         map_.SpanOf(item));
    }
    return true;
  }

  ir::Result<ir::StmtPtr> ParseWith(py::handle stmt) {
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
        if (auto ok = CheckScopeOptimizations(value); !ok) return pypto::unexpected(ok.error());
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
  ir::Result<bool> CheckNoDepArgs(py::handle value) const {
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
  ir::Result<ir::StmtPtr> ParseKernelScopeBody(py::handle body) {
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
  ir::Result<ir::VarPtr> StoreIntoNewTensor(const ir::VarPtr& tile_var, std::vector<ir::StmtPtr>& stores) {
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
    return ir::VarPtr(stored);
  }

  // Whether `name` is read after the statement being parsed, before anything rebinds it, other than
  // by a later pl.at scope outside any loop: in the statements that follow it in its block, then in
  // those following each enclosing block's statement. A statement that reads the name
  // (`k = pl.assemble(k, ...)`) reads the earlier value; one that only assigns it
  // (`k = pl.cast(...)`) ends the search. A later scope reading the tile needs no tensor:
  // OutlineIncoreScopes hands a tile to a later kernel itself.
  bool ReadAsTensorAfterCurrentStatement(const std::string& name) const {
    for (auto frame = blocks_.rbegin(); frame != blocks_.rend(); ++frame) {
      py::list rest;
      for (size_t i = frame->next + 1; i < py::len(frame->statements); ++i) rest.append(frame->statements[i]);
      if (auto use = FirstUse(rest, name); use != NameUse::kNone)
        return use == NameUse::kRead || use == NameUse::kReadInLoop;
    }
    return false;
  }

  // kRead: by orchestration code; kReadInKernelScope: by a later pl.at scope; kReadInLoop: inside a
  // later loop, in a scope or not.
  enum class NameUse { kNone, kRead, kReadInKernelScope, kReadInLoop, kRebound };

  static bool IsRead(NameUse use) { return use != NameUse::kNone && use != NameUse::kRebound; }

  // The first use of `name` in `statements`, in the order they run. A `with` body always runs, so a
  // rebinding there counts; one in a branch or loop body may not run, so only reads count there.
  static NameUse FirstUse(py::handle statements, const std::string& name) {
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

  static bool IsKernelScope(py::handle with) {
    py::handle context = py::list(with.attr("items"))[0].attr("context_expr");
    return IsNode(context, "Call") && DottedName(context.attr("func")) == "pl.at";
  }

  static bool ReadsName(py::handle node, const std::string& name) {
    for (auto inner : py::module_::import("ast").attr("walk")(node)) {
      const bool augmented = IsNode(inner, "AugAssign");  // `y += 1` reads y, though its target is a store
      py::handle named = augmented ? inner.attr("target") : inner;
      if (IsNode(named, "Name") && named.attr("id").cast<std::string>() == name &&
          (augmented || IsNode(named.attr("ctx"), "Load")))
        return true;
    }
    return false;
  }

  static bool AssignsName(py::handle stmt, const std::string& name) {
    if (!IsNode(stmt, "Assign") && !IsNode(stmt, "AnnAssign")) return false;
    py::list targets = IsNode(stmt, "Assign") ? py::list(stmt.attr("targets")) : py::list();
    if (IsNode(stmt, "AnnAssign")) targets.append(stmt.attr("target"));
    for (auto target : targets)
      if (IsNode(target, "Name") && target.attr("id").cast<std::string>() == name) return true;
    return false;
  }

  // `with pl.manual_scope():` / `with pl.scope(mode=...)`: a runtime scope around orchestration code.
  ir::Result<ir::StmtPtr> ParseRuntimeScope(py::handle stmt, py::handle context, py::handle target) {
    const RuntimeScopePlace place{.in_kernel = kernel_depth_ > 0, .in_manual_scope = manual_scopes_ > 0};
    auto manual = ReadRuntimeScope(context, target, place, map_);
    if (!manual) return pypto::unexpected(manual.error());
    manual_scopes_ += *manual ? 1 : 0;
    auto body = ParseBlock(stmt.attr("body"));
    manual_scopes_ -= *manual ? 1 : 0;
    if (!body) return body;
    return ir::StmtPtr(std::make_shared<ir::RuntimeScopeStmt>(*manual, *body, map_.SpanOf(stmt)));
  }

  // ---- explicit task order: deps=[...] and `as tid` -----------------------------------------------

  // `deps=[a, b]`: TaskIds the launch waits for on top of what its tensors imply; None is dropped.
  ir::Result<std::vector<ir::ExprPtr>> ParseDeps(py::handle value) {
    if (IsNode(value, "ListComp")) return ParseDepsComprehension(value);
    if (!IsNode(value, "List") && !IsNode(value, "Tuple"))
      return MakeError(DiagnosticKind::Syntax, "deps= takes a list of TaskIds, such as deps=[tid]", map_.SpanOf(value));
    std::vector<ir::ExprPtr> deps;
    for (auto item : value.attr("elts")) {
      if (IsNode(item, "Constant") && item.attr("value").is_none()) continue;
      auto dep = ParseDep(item);
      if (!dep) return pypto::unexpected(dep.error());
      deps.push_back(*dep);
    }
    return deps;
  }

  // `deps=[tids[g * n + j] for j in range(n)]`: the comprehension is unrolled at compile time, so
  // `range`'s bounds must be constants; `j` is each value in turn.
  ir::Result<std::vector<ir::ExprPtr>> ParseDepsComprehension(py::handle comp) {
    const char* form = "deps= takes a comprehension of the form [tids[i] for i in range(n)] with constant bounds";
    auto generators = comp.attr("generators");
    if (py::len(generators) != 1) return MakeError(DiagnosticKind::Syntax, form, map_.SpanOf(comp));
    py::handle generator = generators[py::int_(0)];
    py::handle target = generator.attr("target"), iter = generator.attr("iter");
    if (!IsNode(target, "Name") || py::len(generator.attr("ifs")) > 0 || !IsNode(iter, "Call") ||
        DottedName(iter.attr("func")) != "range" || py::len(iter.attr("keywords")) > 0)
      return MakeError(DiagnosticKind::Syntax, form, map_.SpanOf(generator));
    std::vector<int64_t> bounds;
    for (auto arg : iter.attr("args")) {
      auto bound = ParseExpr(arg);
      if (!bound) return pypto::unexpected(bound.error());
      auto known = ir::AsConstInt(*bound);
      if (!known)
        return MakeError(DiagnosticKind::Syntax, form, map_.SpanOf(arg),
                         "the bounds of range() here are unrolled, so they must be constants");
      bounds.push_back(*known);
    }
    if (bounds.empty() || bounds.size() > 3) return MakeError(DiagnosticKind::Syntax, form, map_.SpanOf(iter));
    const int64_t start = bounds.size() > 1 ? bounds[0] : 0, stop = bounds.size() > 1 ? bounds[1] : bounds[0];
    const int64_t step = bounds.size() > 2 ? bounds[2] : 1;
    if (step == 0) return MakeError(DiagnosticKind::InvalidOperation, "range() step cannot be zero", map_.SpanOf(iter));
    const std::string name = target.attr("id").cast<std::string>();
    auto outer = env_;
    std::vector<ir::ExprPtr> deps;
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
      auto index = std::make_shared<ir::Var>(name, std::make_shared<ir::ScalarType>(ir::DataType::INDEX),
                                             map_.SpanOf(target));
      program_.known_ints[index->id()] = i;
      env_[name] = index;
      auto dep = ParseDep(comp.attr("elt"));
      if (!dep) {
        env_ = std::move(outer);
        return pypto::unexpected(dep.error());
      }
      deps.push_back(*dep);
    }
    env_ = std::move(outer);
    return deps;
  }

  // One entry of deps=: a TaskId, or an array of them.
  ir::Result<ir::ExprPtr> ParseDep(py::handle item) {
    auto dep = ParseExpr(item);
    if (!dep) return pypto::unexpected(dep.error());
    if (!ir::IsTaskId(*(*dep)->type()) && !ir::IsTaskIdArray(*(*dep)->type()))
      return MakeError(DiagnosticKind::Type,
                       fmt::format("deps= takes TaskIds, but '{}' is {}", ir::PrintExpr(*dep), (*dep)->type()->str()),
                       map_.SpanOf(item),
                       "bind a launch's TaskId with `with pl.at(...) as tid:` or `out, tid = pl.submit(...)`");
    return *dep;
  }

  // The `as tid` target of a launch scope, bound in the enclosing code (null when there is none).
  ir::Result<ir::VarPtr> BindScopeTaskId(py::handle target, const char* scope) {
    if (target.is_none()) return ir::VarPtr{};
    if (!IsNode(target, "Name"))
      return MakeError(DiagnosticKind::Syntax, fmt::format("`with {}(...) as tid` binds one name", scope),
                       map_.SpanOf(target));
    return BindTaskId(target.attr("id").cast<std::string>(), map_.SpanOf(target));
  }

  bool IsSubmit(py::handle value) const {
    if (!IsNode(value, "Call")) return false;
    const std::string callee = DottedName(value.attr("func"));
    return callee == "pl.submit" || callee == "pl.spmd_submit";
  }

  // `outs, tid = pl.spmd_submit(self.k, x, core_num=N[, deps=..., predicate=...])`: the pl.spmd launch
  // it stands for (spmd_submit.cpp), parsed in place.
  ir::Result<ir::StmtPtr> ParseSpmdSubmit(py::handle stmt, py::handle value, const std::vector<py::handle>& targets) {
    auto statements = RewriteSpmdSubmit(stmt, value, targets, fmt::format("_dispatch_predicate_{}", next_predicate_++),
                                        map_);
    if (!statements) return pypto::unexpected(statements.error());
    return ParseBlock(*statements);
  }

  // `out, tid = pl.submit(self.kernel, x, out, deps=[...])`, or with no result `tid = pl.submit(...)`
  // / `pl.submit(...)`: the kernel call `out = self.kernel(x, out)` launched in that order. `targets`
  // are the assignment's names (the last one, if any, is the TaskId; `_` drops it).
  ir::Result<ir::StmtPtr> ParseSubmit(py::handle stmt, py::handle value, std::vector<py::handle> targets) {
    if (DottedName(value.attr("func")) == "pl.spmd_submit") return ParseSpmdSubmit(stmt, value, targets);
    const ir::Span span = map_.SpanOf(value);
    if (kernel_depth_ > 0) return MakeError(DiagnosticKind::Syntax, "pl.submit launches a kernel from orchestration code", span);
    py::list positional = value.attr("args");
    if (py::len(positional) == 0)
      return MakeError(DiagnosticKind::Syntax, "pl.submit needs the kernel to launch", span,
                       "write `out, tid = pl.submit(self.kernel, x, out)`");
    ir::LaunchOrder order;
    std::vector<size_t> dumped;
    py::list keywords;
    for (auto keyword : value.attr("keywords")) {
      const std::string key = keyword.attr("arg").is_none() ? "" : keyword.attr("arg").cast<std::string>();
      if (key == "deps") {
        auto deps = ParseDeps(keyword.attr("value"));
        if (!deps) return pypto::unexpected(deps.error());
        order.deps = std::move(*deps);
      } else if (key == "allow_early_resolve") {
        auto flag = BoolOption(keyword.attr("value"), "pl.submit allow_early_resolve");
        if (!flag) return pypto::unexpected(flag.error());
        order.allow_early_resolve = *flag;
      } else if (key == "dumps") {
        auto positions = DumpedPositions(keyword.attr("value"), positional);
        if (!positions) return pypto::unexpected(positions.error());
        dumped = std::move(*positions);
      } else {
        keywords.append(keyword);
      }
    }
    py::handle task_target = targets.empty() ? py::handle() : targets.back();
    if (!targets.empty()) targets.pop_back();
    if (targets.size() > 1)
      return MakeError(DiagnosticKind::Syntax, "pl.submit of a kernel with several results is not supported yet",
                       map_.SpanOf(stmt));
    // The launch as a plain call: `out = kernel(x, out)`, parsed like any kernel call statement.
    py::module_ ast = py::module_::import("ast");
    py::object call = ast.attr("Call")(positional[0], positional[py::slice(1, py::len(positional), 1)], keywords);
    ast.attr("copy_location")(call, value);
    py::object plain = targets.empty() ? ast.attr("Expr")(call)
                                       : ast.attr("Assign")(py::make_tuple(targets[0]), call);
    ast.attr("copy_location")(plain, stmt);
    auto parsed = targets.empty() ? ParseKernelCallStatement(plain) : ParseAssign(plain, false);
    if (!parsed) return parsed;
    if (task_target && IsNode(task_target, "Name") && task_target.attr("id").cast<std::string>() != "_")
      order.task_id = BindTaskId(task_target.attr("id").cast<std::string>(), map_.SpanOf(task_target));
    else if (task_target && !IsNode(task_target, "Name"))
      return MakeError(DiagnosticKind::Syntax, "the TaskId of pl.submit is bound to a plain name",
                       map_.SpanOf(task_target));
    return LaunchInOrder(*parsed, std::move(order), span, dumped);
  }

  // `dumps=[x, s]` of `pl.submit(self.k, x, s, ...)`: the positions among the kernel's arguments of the
  // names listed, each of which must be one of them.
  ir::Result<std::vector<size_t>> DumpedPositions(py::handle list, const py::list& positional) {
    if (!IsNode(list, "List") && !IsNode(list, "Tuple"))
      return MakeError(DiagnosticKind::Syntax, "pl.submit dumps= takes a list of the launch's arguments",
                       map_.SpanOf(list), "write `dumps=[x, out]`");
    std::vector<size_t> positions;
    for (auto element : list.attr("elts")) {
      std::optional<size_t> found;
      for (size_t i = 1; IsNode(element, "Name") && i < py::len(positional) && !found; ++i) {
        py::handle arg = positional[i];
        if (IsNode(arg, "Name") && arg.attr("id").cast<std::string>() == element.attr("id").cast<std::string>())
          found = i - 1;
      }
      if (!found)
        return MakeError(DiagnosticKind::Syntax,
                         fmt::format("pl.submit dumps= names arguments of this launch; `{}` is not one of them",
                                     py::module_::import("ast").attr("unparse")(element).cast<std::string>()),
                         map_.SpanOf(element));
      positions.push_back(*found);
    }
    return positions;
  }

  // `pl.system.task_dummy(deps=[a, b])` (the printer writes the list positionally).
  ir::Result<ir::ExprPtr> ParseTaskDummy(py::handle node) {
    const ir::Span span = map_.SpanOf(node);
    if (kernel_depth_ > 0)
      return MakeError(DiagnosticKind::Syntax, "pl.system.task_dummy orders tasks in orchestration code, not in a kernel",
                       span);
    py::list positional = node.attr("args");
    py::list keywords = node.attr("keywords");
    py::handle deps_node;
    if (py::len(positional) == 1 && py::len(keywords) == 0) deps_node = positional[0];
    if (py::len(positional) == 0 && py::len(keywords) == 1 && !keywords[0].attr("arg").is_none() &&
        keywords[0].attr("arg").cast<std::string>() == "deps")
      deps_node = keywords[0].attr("value");
    if (!deps_node)
      return MakeError(DiagnosticKind::Syntax, "pl.system.task_dummy takes one argument, deps=[...]", span);
    auto deps = ParseDeps(deps_node);
    if (!deps) return pypto::unexpected(deps.error());
    auto call = ir::OpRegistry::Get().CreateCall("system.task_dummy", {Tuple(*deps, map_.SpanOf(deps_node))}, {}, span);
    if (!call) return pypto::unexpected(call.error());
    return ir::ExprPtr(*call);
  }

  ir::Result<ir::StmtPtr> ParseKernelCallStatement(py::handle stmt) {
    auto expr = ParseExpr(stmt.attr("value"));
    if (!expr) return pypto::unexpected(expr.error());
    return ir::StmtPtr(std::make_shared<ir::EvalStmt>(*expr, map_.SpanOf(stmt)));
  }

  // ---- SPMD launches -----------------------------------------------------------------------------
  // `with pl.spmd(N):` around one kernel call launches that call on N blocks; around kernel code it
  // is a kernel scope of its own (outlined like pl.at) launched on N blocks, each reading its index
  // with pl.tile.get_block_idx(). `for b in pl.spmd(N):` is the latter with b as that index.

  struct SpmdLaunch {
    ir::ExprPtr core_num;
    bool sync_start = false;
    std::string name_hint;
    std::vector<ir::ExprPtr> deps;
    bool allow_early_resolve = false;
  };

  // A launch option that must be written True or False (`sync_start=`, `allow_early_resolve=`).
  ir::Result<bool> BoolOption(py::handle value, std::string_view what) {
    if (!IsNode(value, "Constant") || !py::isinstance<py::bool_>(value.attr("value")))
      return MakeError(DiagnosticKind::Type, fmt::format("{} must be True or False", what), map_.SpanOf(value));
    return value.attr("value").cast<bool>();
  }

  ir::Result<SpmdLaunch> ReadSpmdLaunch(py::handle call) {
    const ir::Span span = map_.SpanOf(call);
    if (kernel_depth_ > 0)
      return MakeError(DiagnosticKind::Syntax, "a pl.spmd launch cannot appear inside a kernel", span);
    py::handle count;
    py::list positional = call.attr("args");
    if (py::len(positional) > 1) return MakeError(DiagnosticKind::Syntax, "pl.spmd takes one core_num", span);
    if (py::len(positional) == 1) count = positional[0];
    SpmdLaunch launch;
    for (auto keyword : call.attr("keywords")) {
      std::string key = keyword.attr("arg").is_none() ? "**" : keyword.attr("arg").cast<std::string>();
      py::handle value = keyword.attr("value");
      if (key == "core_num" && !count) {
        count = value;
      } else if (key == "name_hint" && IsNode(value, "Constant") && py::isinstance<py::str>(value.attr("value"))) {
        launch.name_hint = value.attr("value").cast<std::string>();
      } else if (key == "allow_early_resolve" || key == "sync_start") {
        auto flag = BoolOption(value, "pl.spmd " + key);
        if (!flag) return pypto::unexpected(flag.error());
        (key == "sync_start" ? launch.sync_start : launch.allow_early_resolve) = *flag;
      } else if (key == "optimizations") {
        if (auto ok = CheckScopeOptimizations(value); !ok) return pypto::unexpected(ok.error());
      } else if (key == "deps") {
        auto deps = ParseDeps(value);
        if (!deps) return pypto::unexpected(deps.error());
        launch.deps = std::move(*deps);
      } else {
        return MakeError(DiagnosticKind::Syntax, fmt::format("pl.spmd argument '{}' is not supported yet", key),
                         map_.SpanOf(keyword));
      }
    }
    if (!count) return MakeError(DiagnosticKind::Syntax, "pl.spmd needs core_num", span);
    auto expr = ParseExpr(count);
    if (!expr) return pypto::unexpected(expr.error());
    auto core_num = CheckBlockCount(*expr, map_.SpanOf(count));
    if (!core_num) return pypto::unexpected(core_num.error());
    launch.core_num = *core_num;
    return launch;
  }

  // Whether a statement of a pl.spmd body calls a kernel the program defines.
  bool CallsKernel(py::handle stmt) const {
    if (!(IsNode(stmt, "Assign") || IsNode(stmt, "AnnAssign") || IsNode(stmt, "Expr"))) return false;
    py::handle value = stmt.attr("value");
    if (value.is_none() || !IsNode(value, "Call")) return false;
    const std::string callee = DottedName(value.attr("func"));
    if (program_.methods) return callee.starts_with("self.");
    if (!program_.request) return false;
    auto it = program_.request->functions.find(JitFunctionName(callee));
    return it != program_.request->functions.end() && (it->second.form == "incore" || it->second.form == "extern");
  }

  // The @pl.jit.incore (or extern) function a JIT call names: `kernel`, or `self.kernel` as upstream's
  // JIT lets model code write it (it makes each such function a method of the program it generates).
  std::string JitFunctionName(const std::string& callee) const {
    if (callee.starts_with("self.") && program_.request->functions.contains(callee.substr(5))) return callee.substr(5);
    return callee;
  }

  // `with pl.cluster():` asks the device to co-schedule the AIC and AIV kernels launched in its body
  // on one cluster. What they compute does not depend on it, and the runtime already runs a mixed
  // kernel's parts as one group, so its body is orchestration code like any other.
  ir::Result<ir::StmtPtr> ParseCluster(py::handle stmt, py::handle context, py::handle target) {
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

  ir::Result<ir::StmtPtr> ParseSpmd(py::handle stmt, py::handle context) {
    if (cluster_depth_ > 0)
      for (const char* key : {"predicate", "allow_early_resolve"})
        if (HasKeyword(context, key))
          return MakeError(DiagnosticKind::Syntax,
                           fmt::format("pl.spmd({}=...) is not accepted on a pl.spmd inside 'with pl.cluster()'", key),
                           map_.SpanOf(context), "launch it outside the cluster");
    if (HasPredicate(context)) {  // `predicate=(t[i] > 0)`: the launch under an if (spmd_submit.cpp)
      auto statements = RewritePredicatedSpmd(stmt, fmt::format("_dispatch_predicate_{}", next_predicate_++), map_);
      if (!statements) return pypto::unexpected(statements.error());
      return ParseBlock(*statements);
    }
    const ir::Span span = map_.SpanOf(context);
    auto launch = ReadSpmdLaunch(context);
    if (!launch) return pypto::unexpected(launch.error());
    py::list body_stmts = stmt.attr("body");
    const auto kernel_calls = std::count_if(body_stmts.begin(), body_stmts.end(),
                                            [&](py::handle s) { return CallsKernel(s); });
    const bool dispatch = kernel_calls > 0;  // the dispatch form: exactly one call of a kernel
    auto body = dispatch ? ParseBlock(stmt.attr("body")) : ParseKernelScopeBody(stmt.attr("body"));
    if (!body) return pypto::unexpected(body.error());
    ir::LaunchOrder order{
        .deps = std::move(launch->deps), .task_id = nullptr, .allow_early_resolve = launch->allow_early_resolve};
    auto task_id = BindScopeTaskId(py::list(stmt.attr("items"))[0].attr("optional_vars"), "pl.spmd");
    if (!task_id) return pypto::unexpected(task_id.error());
    order.task_id = *task_id;
    const SpmdLaunchSpec spec{.core_num = launch->core_num, .sync_start = launch->sync_start};
    if (dispatch) return LaunchOnBlocks(*body, spec, std::move(order), span);
    return ir::StmtPtr(
        std::make_shared<ir::InCoreScopeStmt>(launch->name_hint, *body, span, launch->core_num, launch->sync_start,
                                              std::move(order)));
  }

  // `for b in pl.spmd(N):`: a kernel scope whose body starts with `b = pl.tile.get_block_idx()`.
  ir::Result<ir::StmtPtr> ParseSpmdLoop(py::handle stmt, py::handle target, py::handle call) {
    const ir::Span span = map_.SpanOf(stmt);
    if (!IsNode(target, "Name"))
      return MakeError(DiagnosticKind::Syntax, "the block index of `for ... in pl.spmd(N)` is a plain name",
                       map_.SpanOf(target));
    if (py::len(stmt.attr("orelse")) > 0)
      return MakeError(DiagnosticKind::Syntax, "'for ... else' is not supported", span);
    auto launch = ReadSpmdLaunch(call);
    if (!launch) return pypto::unexpected(launch.error());
    auto block_idx = ir::OpRegistry::Get().CreateCall("tile.get_block_idx", {}, {}, map_.SpanOf(call));
    if (!block_idx) return pypto::unexpected(block_idx.error());
    auto outer = env_;
    auto index = std::make_shared<ir::Var>(target.attr("id").cast<std::string>(), (*block_idx)->type(),
                                           map_.SpanOf(target));
    env_[index->name_hint()] = index;
    ++kernel_depth_;
    auto body = ParseBlock(stmt.attr("body"));
    if (--kernel_depth_ == 0) written_through_.clear();
    env_ = std::move(outer);
    if (!body) return pypto::unexpected(body.error());
    std::vector<ir::StmtPtr> stmts = {std::make_shared<ir::AssignStmt>(index, *block_idx, map_.SpanOf(target))};
    Append(stmts, *body);
    return ir::StmtPtr(std::make_shared<ir::InCoreScopeStmt>(launch->name_hint, Seq(std::move(stmts), span), span,
                                                             launch->core_num, launch->sync_start,
                                                             ir::LaunchOrder{.deps = std::move(launch->deps),
                                                                             .allow_early_resolve = launch->allow_early_resolve}));
  }

  // `as tid`: the launch's TaskId, a pl.Scalar[pl.TASK_ID], which the launch defines.
  ir::VarPtr BindTaskId(const std::string& name, const ir::Span& span) {
    auto var = std::make_shared<ir::Var>(name, std::make_shared<ir::ScalarType>(ir::DataType::TASK_ID), span);
    env_[name] = var;
    unavailable_.erase(name);
    return var;
  }

  // `for lane in pl.split_aiv(2, mode=pl.SplitMode.X):` in a kernel: the region of vector work the two
  // AIV lanes share, `lane` being pl.tile.get_subblock_idx(). Its statements run in place (it is no
  // loop); a cube tile crosses into it by pl.aiv_shard(t), each lane receiving its half under the
  // region's mode (both the whole tile under NONE).
  ir::Result<ir::StmtPtr> ParseSplitAivRegion(py::handle stmt, py::handle target, py::handle call) {
    const ir::Span span = map_.SpanOf(stmt);
    if (!IsNode(target, "Name"))
      return MakeError(DiagnosticKind::Syntax, "the lane of `for ... in pl.split_aiv(...)` is a plain name",
                       map_.SpanOf(target));
    if (py::len(stmt.attr("orelse")) > 0)
      return MakeError(DiagnosticKind::Syntax, "'for ... else' is not supported", span);
    py::list args = call.attr("args");
    std::optional<int64_t> lanes;
    if (py::len(args) == 1)
      if (auto count = ParseExpr(args[0])) lanes = ir::AsConstInt(*count);
    if (lanes != std::optional<int64_t>(2))
      return MakeError(DiagnosticKind::Syntax, "pl.split_aiv takes the lane count 2 (the AIV lanes of a core group)",
                       map_.SpanOf(call));
    std::optional<int64_t> split;
    for (auto keyword : call.attr("keywords")) {
      const std::string key = keyword.attr("arg").is_none() ? "**" : keyword.attr("arg").cast<std::string>();
      static const std::map<std::string, int64_t> kModes = {
          {"pl.SplitMode.NONE", 0}, {"pl.SplitMode.UP_DOWN", 1}, {"pl.SplitMode.LEFT_RIGHT", 2}};
      auto mode = kModes.find(DottedName(keyword.attr("value")));
      if (key != "mode" || mode == kModes.end())
        return MakeError(DiagnosticKind::Syntax,
                         "pl.split_aiv takes mode=pl.SplitMode.UP_DOWN, LEFT_RIGHT or NONE only", map_.SpanOf(keyword));
      split = mode->second;
    }
    if (!split)
      return MakeError(DiagnosticKind::Syntax, "pl.split_aiv needs mode=pl.SplitMode.UP_DOWN, LEFT_RIGHT or NONE",
                       map_.SpanOf(call));
    auto lane_call = ir::OpRegistry::Get().CreateCall("tile.get_subblock_idx", {}, {}, map_.SpanOf(call));
    if (!lane_call) return pypto::unexpected(lane_call.error());
    auto lane = std::make_shared<ir::Var>(target.attr("id").cast<std::string>(), (*lane_call)->type(),
                                          map_.SpanOf(target));
    env_[lane->name_hint()] = lane;
    unavailable_.erase(lane->name_hint());
    split_aiv_modes_.push_back(*split);
    auto body = ParseBlock(stmt.attr("body"));
    split_aiv_modes_.pop_back();
    if (!body) return pypto::unexpected(body.error());
    std::vector<ir::StmtPtr> stmts = {std::make_shared<ir::AssignStmt>(lane, *lane_call, map_.SpanOf(target))};
    Append(stmts, *body);
    return Seq(std::move(stmts), span);
  }

  // pl.aiv_shard(t) splits t between the lanes as the pl.split_aiv region around it does.
  ir::Result<bool> BindRegionSplit(const ir::OpDef& op, CallBuilder& call, const ir::Span& span) {
    if (op.name != "tile.aiv_shard") return true;
    if (split_aiv_modes_.empty())
      return MakeError(DiagnosticKind::Syntax,
                       "pl.aiv_shard hands a cube tile to the vector lanes of a `for lane in pl.split_aiv(2, "
                       "mode=...)` region, and is used outside one",
                       span);
    if (split_aiv_modes_.back() == 0)
      return MakeError(DiagnosticKind::Syntax,
                       "pl.aiv_shard in a pl.split_aiv region of mode NONE (each lane receiving the whole cube tile) "
                       "is not supported yet",
                       span, "split the region UP_DOWN or LEFT_RIGHT, or hand the tile over in its own region");
    const ir::OpParam* split = op.FindAttrParam("split");
    if (!call.Has(*split)) return call.Bind(*split, ArgValue(ir::OpAttr(split_aiv_modes_.back())), span);
    return true;
  }

  // `for i in pl.range([start,] stop[, step]):` and the pl.parallel / pl.unroll / pl.pipeline forms.
  ir::Result<ir::StmtPtr> ParseFor(py::handle stmt) {
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


  // ---- loops with carried values, and if/else ------------------------------------------------------
  // Inside kernels, a name assigned before a loop and reassigned in its body is carried from one
  // iteration to the next (an iter_arg, yielded at the end of the body, read after the loop through
  // the loop's return var); a name assigned in a branch of an if is merged after it (the if's return
  // var, yielded by each branch). The explicit forms `for i, (a,) in pl.range(n, init_values=(x,))`
  // and `r = pl.yield_(v)` are what the printer writes, and parse back to the same IR.

  struct LoopHeader {
    ir::ForKind kind = ir::ForKind::Sequential;
    ir::ExprPtr start, stop, step;
    ir::Span span;
    ir::VarPtr loop_var;   // null for a while loop
    py::handle condition;  // a while loop's test, read with the carried values bound; null for a for loop
  };

  // A `pl.range` loop whose body breaks or continues: each jump becomes a BreakStmt / ContinueStmt
  // handing on what the loop carries there (CtrlFlowTransform makes the loop structured).
  ir::Result<ir::StmtPtr> ParseLoopWithJumps(py::handle stmt, const LoopHeader& header, const LoopControl& control,
                                             bool explicit_carries) {
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
  ir::Result<ir::StmtPtr> ParseJump(py::handle stmt, bool is_break) {
    ir::StmtPtr jump = MakeJump(is_break, {}, map_.SpanOf(stmt));
    jump_scopes_.back().parsed.emplace_back(jump, env_);
    return jump;
  }

  static bool IsExplicitJump(py::handle value) {
    if (!IsNode(value, "Call")) return false;
    const std::string callee = DottedName(value.attr("func"));
    return callee == "pl.break_" || callee == "pl.continue_";
  }

  // `pl.break_(v, ...)` / `pl.continue_(v, ...)`, as the printer writes a jump in a loop with
  // init_values: one value per carried value.
  ir::Result<ir::StmtPtr> ParseExplicitJump(py::handle call, const ir::Span& span) {
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
  static ir::StmtPtr MakeJump(bool is_break, std::vector<ir::ExprPtr> values, const ir::Span& span) {
    if (is_break) return std::make_shared<ir::BreakStmt>(std::move(values), span);
    return std::make_shared<ir::ContinueStmt>(std::move(values), span);
  }

  // Gives each jump of the loop being parsed what the loop carries on at it: the values that the
  // names of its carried values (`kept`) had at the jump. `stmts`: the parsed body.
  ir::Result<std::vector<ir::StmtPtr>> FillJumps(const std::vector<ir::IterArg>& kept,
                                                 const std::unordered_map<const ir::Var*, ir::VarPtr>& uncarried,
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

  // The trailing `targets = pl.yield_(values)` of a body, as written.
  struct ParsedYield {
    std::vector<ir::ExprPtr> values;
    std::vector<std::string> targets;
    py::handle annotation;  // `r: T = pl.yield_(v)`; null otherwise
    ir::Span span;
  };
  struct ParsedBody {
    std::vector<ir::StmtPtr> stmts;
    std::optional<ParsedYield> yield;
  };

  // A loop or branch body; a trailing pl.yield_ is returned apart from the other statements.
  ir::Result<ParsedBody> ParseBody(py::handle statements) {
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

  ir::Result<ParsedYield> ParseYield(py::handle stmt) {
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
  ir::Result<std::vector<ir::VarPtr>> YieldResults(const ParsedYield& yield) {
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

  static ir::StmtPtr Seq(std::vector<ir::StmtPtr> stmts, const ir::Span& span = {}) {
    return std::make_shared<ir::SeqStmts>(std::move(stmts), span);
  }

  // Whether `var` is read anywhere in `stmts`.
  static bool Reads(const std::vector<ir::StmtPtr>& stmts, const ir::Var* var) {
    struct Finder final : ir::IRVisitor {
      const ir::Var* target;
      bool found = false;
      void VisitVar(const std::shared_ptr<const ir::Var>& v) override { found |= v.get() == target; }
    } finder;
    finder.target = var;
    for (const auto& stmt : stmts) finder.VisitStmt(stmt);
    return finder.found;
  }

  // Outside kernels, loops carry scalars, TaskIds and tensors. A tensor whose new value is the same
  // tensor updated in place by a kernel scope (`t = pl.assemble(t, ...)`) is not carried: every
  // iteration writes into that one buffer, and after the loop the name still means it. A tensor the
  // body reads and then rebinds to another buffer (`current = next`) is carried (ClassifyIterArgCarry
  // makes it a Rebind carry).
  ir::Result<ir::StmtPtr> ParseOrchestrationLoop(py::handle stmt, const LoopHeader& header) {
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

  static bool IsOrchestrationCarry(const ir::Type& type) {
    return ir::IsTaskId(type) || ir::IsTaskIdArray(type) || type.As<ir::ScalarType>();
  }

  static ir::Result<ir::StmtPtr> RefuseOrchestrationCarry(const ir::Var& var, const ir::Span& span) {
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("'{}' ({}) is reassigned inside the loop; orchestration loops carry scalars, TaskIds, "
                                 "TaskId arrays and tensors; other loop-carried values are supported inside kernels "
                                 "(pl.at scopes) only",
                                 var.name_hint(), var.type()->str()),
                     span);
  }

  // An orchestration loop carries scalars, TaskIds, TaskId arrays and tensors, nothing else.
  static ir::Result<ir::StmtPtr> CheckOrchestrationCarries(ir::Result<ir::StmtPtr> loop) {
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
  ir::Result<ir::StmtPtr> ParseExplicitLoop(py::handle stmt, const LoopHeader& header, py::handle carried_target,
                                            py::handle init_values, py::handle carry_kinds) {
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
  ir::Result<bool> ReadCarryKinds(py::handle kinds, std::vector<ir::IterArg>& iter_args) {
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
  ir::StmtPtr DropInPlaceTensorCarries(const LoopHeader& header, std::vector<ir::IterArg> iter_args,
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
  static ir::StmtPtr DropUncarriedJumpValues(const ir::StmtPtr& body, const std::vector<ir::IterArg>& iter_args,
                                             const std::unordered_map<const ir::Var*, ir::VarPtr>& uncarried) {
    return RewriteOwnJumps(body, [&](const ir::JumpStmt& jump) -> ir::StmtPtr {
      std::vector<ir::ExprPtr> values;
      for (size_t i = 0; i < iter_args.size() && i < jump.values().size(); ++i)
        if (!uncarried.contains(iter_args[i].var.get())) values.push_back(jump.values()[i]);
      return MakeJump(jump.Is<ir::BreakStmt>(), std::move(values), jump.span());
    });
  }

  static ir::Result<bool> CheckCarriedType(const std::string& name, const ir::TypePtr& carried,
                                           const ir::ExprPtr& next, const ir::Span& span) {
    if (carried->equals(*next->type())) return true;
    return MakeError(DiagnosticKind::Type,
                     fmt::format("'{}' is carried from one loop iteration to the next, but its type changes from {} "
                                 "to {}",
                                 name, carried->str(), next->type()->str()),
                     span, "a loop-carried value keeps its shape, dtype and memory space in every iteration");
  }

  // ---- while loops -------------------------------------------------------------------------------
  // `while cond:` in a kernel carries the names it reassigns like a for loop does, and its condition
  // reads them; `for (a, b) in pl.while_(init_values=(x, y)):` opening with `pl.cond(cond)` and ending
  // with `ra, rb = pl.yield_(...)` names them explicitly (what the printer writes). Orchestration code
  // has no while loops: the task plan needs each loop's trip count.

  ir::Result<ir::StmtPtr> ParseWhile(py::handle stmt) {
    const ir::Span span = map_.SpanOf(stmt);
    if (auto refused = RefuseWhile(stmt)) return pypto::unexpected(*refused);
    return ParseKernelLoop(stmt, LoopHeader{.span = span, .condition = stmt.attr("test")});
  }

  std::optional<ir::Diagnostic> RefuseWhile(py::handle stmt) const {
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
  ir::Result<ir::ExprPtr> WhileCondition(const LoopHeader& header) {
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
  ir::Result<ir::StmtPtr> ParseExplicitWhile(py::handle stmt) {
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

  // The carried values `(a, b)` of a pl.while_ loop, started at `init_values=(x, y)`.
  ir::Result<std::vector<ir::IterArg>> ExplicitIterArgs(py::handle target, py::handle init_values) {
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
  ir::Result<std::vector<ir::VarPtr>> ExplicitResults(const std::vector<ir::IterArg>& iter_args, ParsedBody& body,
                                                      const ir::Span& span) {
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
  ir::Result<ir::ExprPtr> InitValue(py::handle node) {
    if (IsNode(node, "Name"))
      if (auto it = env_.find(node.attr("id").cast<std::string>()); it != env_.end()) return ir::ExprPtr(it->second);
    return ParseExpr(node);
  }

  // A kernel loop: names assigned before it and reassigned in its body are carried.
  ir::Result<ir::StmtPtr> ParseKernelLoop(py::handle stmt, const LoopHeader& header) {
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

  static bool IsCreation(const ir::Expr& value) {
    const auto* call = value.As<ir::Call>();
    return call && call->is_op_call() && (call->op()->name == "tensor.create" || call->op()->name == "tile.create");
  }

  // `acc = pl.create_tensor(...)` before a loop whose body makes `acc` a tile of another kind
  // (`acc = pl.matmul(...)`: an Acc tile): the placeholder's contents were never written, so the loop
  // carries a fresh tile of the body's type instead. True if some name was retyped (parse again).
  bool RetypePlaceholders(py::handle stmt, const LoopHeader& header, std::vector<ir::StmtPtr>& prologue) {
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
  ir::Result<ir::StmtPtr> FreshTile(const std::string& name, const ir::TileType& tile, const ir::Span& span) {
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
  std::vector<std::string> CarryCandidates(py::handle body) const {
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

  ir::Result<ir::StmtPtr> ParseCarryingLoop(py::handle stmt, const LoopHeader& header,
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
      // Unavailable after the body (reported where it is read), or the tensor it was before.
      if (value == env_.end() || in_place[i]) continue;
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

  // The names first bound in a loop body to a store into a tensor named before the loop (`out =
  // pl.store(t, [i, 0], c)`): after the loop each means that tensor, as in Python, where it holds the
  // last iteration's value, which is the same buffer. `uncarried` maps a tensor the loop stopped
  // carrying to the one before it.
  std::vector<std::pair<std::string, ir::VarPtr>> TensorsStoredInto(
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

  ir::Diagnostic Unavailable(std::string message, std::string hint) const {
    return ir::Diagnostic{DiagnosticKind::UndefinedName, std::move(message), {}, std::move(hint)};
  }

  // After a branch or loop, `name` has no value: reading it reports why.
  void MarkUnavailable(const std::string& name, ir::Diagnostic diagnostic) {
    env_.erase(name);
    unavailable_[name] = std::move(diagnostic);
  }

  // `if cond:` / `else:`. A condition known at compile time keeps only the branch it selects.
  ir::Result<ir::StmtPtr> ParseIf(py::handle stmt) {
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
    return FinishImplicitIf(*condition, std::move(*then_body), std::move(else_body), has_else, then_env, else_env,
                            before, span);
  }

  // Branches ending in `r = pl.yield_(v)`: both yield the same number of values of the same types.
  ir::Result<ir::StmtPtr> FinishExplicitIf(const ir::ExprPtr& condition, ParsedBody then_body, ParsedBody else_body,
                                           bool has_else, const ir::Span& span) {
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
  ir::Result<ir::StmtPtr> FinishIfWithJump(const ir::ExprPtr& condition, ParsedBody then_body, ParsedBody else_body,
                                           bool has_else, const Env& fall_env, bool then_jumps, const Env& before,
                                           const ir::Span& span) {
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
  ir::Result<ir::StmtPtr> FinishImplicitIf(const ir::ExprPtr& condition, ParsedBody then_body, ParsedBody else_body,
                                           bool has_else, const Env& then_env, const Env& else_env, const Env& before,
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
      ir::TypePtr merged = t->second->type();
      if (!merged->equals(*e->second->type())) merged = WholeTileOfBoth(*merged, *e->second->type());
      if (!merged) {
        MarkUnavailable(name, Unavailable(fmt::format("'{}' has type {} after the if branch but {} after the else "
                                                      "branch of the if at line {}",
                                                      name, t->second->type()->str(), e->second->type()->str(),
                                                      span.line),
                                          "give both branches' values the same shape, dtype and memory space"));
        continue;
      }
      then_values.push_back(t->second);
      else_values.push_back(e->second);
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
  static ir::TypePtr WholeTileOfBoth(const ir::Type& a, const ir::Type& b) {
    const auto* x = a.As<ir::TileType>();
    const auto* y = b.As<ir::TileType>();
    if (!x || !y || x->shape() != y->shape() || x->dtype() != y->dtype() || x->memory_space() != y->memory_space())
      return nullptr;
    return std::make_shared<ir::TileType>(x->shape(), x->dtype(), x->memory_space(), x->memref());
  }

  ir::VarPtr TensorBeforeIf(const std::string& name, const Env& then_env, const Env& else_env,
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

  ir::Result<ir::StmtPtr> ParseReturn(py::handle stmt) {
    auto parsed = ReturnValues(stmt);
    if (!parsed) return pypto::unexpected(parsed.error());
    std::vector<ir::ExprPtr> values = std::move(*parsed);
    if (source_.signature && !ReturnsUndeclared(*source_.signature)) {
      const Signature& signature = *source_.signature;
      auto ok = signature.returns_from_body ? CheckReturnAnnotation(signature, values, map_.SpanOf(stmt))
                                            : CheckReturn(signature, values, map_.SpanOf(stmt));
      if (!ok) return pypto::unexpected(ok.error());
    }
    returns_ = values;
    return ir::StmtPtr(std::make_shared<ir::ReturnStmt>(std::move(values), map_.SpanOf(stmt)));
  }

  ir::Result<ir::ExprPtr> StaleSliceRead(const ir::Var& slice, const ir::Span& span) const {
    const auto* load = orchestration_slices_.at(&slice)->As<ir::Call>();
    const auto* tensor = load->args()[0]->As<ir::Var>();
    const std::string source = tensor ? tensor->name_hint() : "its tensor";
    return MakeError(DiagnosticKind::InvalidOperation,
                     fmt::format("'{}' is read after this kernel wrote into it; the slice is loaded once when the "
                                 "kernel starts, so this read would not see the write, which went to '{}'",
                                 slice.name_hint(), source),
                     span, fmt::format("keep the tile you assigned in a variable and read that, or slice '{}' again",
                                       source));
  }

  ir::Result<ir::ExprPtr> ParseExpr(py::handle node) {
    std::string type = NodeType(node);
    ir::Span span = map_.SpanOf(node);
    if (type == "Name") {
      std::string name = node.attr("id").cast<std::string>();
      auto it = env_.find(name);
      if (it != env_.end() && written_through_.contains(it->second.get()))
        return StaleSliceRead(*it->second, span);
      if (it != env_.end()) {
        if (auto known = program_.known_ints.find(it->second->id()); known != program_.known_ints.end())
          return ir::ExprPtr(std::make_shared<ir::ConstInt>(
              known->second, it->second->type()->As<ir::ScalarType>()->dtype(), span));
        return ir::ExprPtr(it->second);
      }
      auto constant = source_.constants->find(name);
      if (constant != source_.constants->end()) {
        if (const auto* dim = std::get_if<DynamicDim>(&constant->second)) return DynamicExtent(*dim, span);
        if (std::holds_alternative<std::vector<int64_t>>(constant->second))
          return MakeError(DiagnosticKind::Type, fmt::format("the list '{}' is not a value here", name), span,
                           "a constant list stands for a list literal: offsets, shapes, valid_shape=...");
        if (const auto* dtype = std::get_if<ir::DataType>(&constant->second))
          return MakeError(DiagnosticKind::Type,
                           fmt::format("'{}' is the dtype pl.{}, not a value", name, ir::DataTypeName(*dtype)), span,
                           "a dtype names the element type of an op's result, e.g. pl.cast(t, target_type=dt)");
        if (const auto* text = std::get_if<std::string>(&constant->second))
          return MakeError(DiagnosticKind::Type, fmt::format("'{}' is the string \"{}\", not a value", name, *text),
                           span, "a string names an op's attribute, e.g. pl.tile.gemv(a, b, acc_phase=phase)");
        if (std::holds_alternative<NoneValue>(constant->second))
          return MakeError(DiagnosticKind::Type, fmt::format("'{}' is None, not a value", name), span,
                           "None leaves out an optional keyword argument, e.g. pl.tile.tri(0, [16, 16], "
                           "valid_shape=vs) with vs = None");
        return ConstantExpr(constant->second, span);
      }
      if (auto why = unavailable_.find(name); why != unavailable_.end()) {
        auto diagnostic = why->second;
        diagnostic.span = span;
        return pypto::unexpected(diagnostic);
      }
      undefined_name_ = name;
      return MakeError(DiagnosticKind::UndefinedName, fmt::format("name '{}' is not defined", name), span);
    }
    if (type == "Constant") return ParseConstant(node);
    if (type == "List" || type == "Tuple") {
      std::vector<ir::ExprPtr> elements;
      for (auto element : node.attr("elts")) {
        auto expr = ParseExpr(element);
        if (!expr) return pypto::unexpected(expr.error());
        elements.push_back(*expr);
      }
      return ir::ExprPtr(std::make_shared<ir::TupleLiteral>(std::move(elements), span));
    }
    if (type == "Call") return ParseCall(node);
    // `x.shape` of a tensor or tile: its extents, constants once the function is specialised.
    if (const ir::ShapedType* shaped = ShapeOf(node)) {
      std::vector<ir::ExprPtr> extents;
      for (int64_t dim : shaped->shape())
        extents.push_back(std::make_shared<ir::ConstInt>(dim, ir::DataType::INDEX, span));
      return ir::ExprPtr(std::make_shared<ir::TupleLiteral>(std::move(extents), span));
    }
    if (type == "Subscript" && ShapeOf(node.attr("value"))) return ParseShapeExtent(node);
    // pl.AUTO: "let the compiler choose" (reserve_buffer's base), upstream's -1.
    if (type == "Attribute" && DottedName(node) == "pl.AUTO" && !env_.contains("pl"))
      return ir::ExprPtr(std::make_shared<ir::ConstInt>(-1, ir::DataType::INDEX, span));
    if (type == "Subscript" && IsArray(node.attr("value"))) return ParseArrayLoad(node);
    if (type == "Subscript" && (IsNode(node.attr("value"), "List") || IsNode(node.attr("value"), "Tuple")))
      return ParseListElement(node);
    if (type == "Subscript") return ParseSliceLoad(node);
    if (type == "BinOp") return ParseBinOp(node);
    if (type == "Compare") return ParseCompare(node);
    if (type == "UnaryOp") return ParseUnaryOp(node);
    if (type == "BoolOp")
      return MakeError(DiagnosticKind::Syntax, "'and' and 'or' are supported in the condition of an if only", span,
                       "branch on the condition: `if a and b:` runs its body when both hold");
    return MakeError(DiagnosticKind::Syntax, fmt::format("'{}' expressions are not supported in kernels yet", type),
                     span);
  }

  // ---- dynamic dimensions ----------------------------------------------------------------------
  // Under @pl.jit every call is specialised on its tensors' shapes, so a `pl.dynamic` dimension is a
  // number by the time the body is parsed: the extent of the parameter dimension it labels.

  ir::Result<ir::ExprPtr> DynamicExtent(const DynamicDim& dim, const ir::Span& span) const {
    auto bound = dynamic_.find(dim.name);
    if (bound == dynamic_.end())
      return MakeError(DiagnosticKind::UndefinedName,
                       fmt::format("the dynamic dimension '{}' is not bound to any parameter", dim.name), span,
                       fmt::format("annotate a tensor parameter with it (pl.Tensor[[{}, ...], ...]) or call "
                                   "t.bind_dynamic(axis, {})",
                                   dim.name, dim.name));
    if (!bound->second.conflict.empty())
      return MakeError(DiagnosticKind::Type,
                       fmt::format("the dynamic dimension '{}' has no single extent here: it is {} for parameter "
                                   "'{}' but {}",
                                   dim.name, bound->second.extent, bound->second.param, bound->second.conflict),
                       span, "read the extent of one tensor with pl.tensor.dim(t, axis)");
    return ir::ExprPtr(std::make_shared<ir::ConstInt>(bound->second.extent, ir::DataType::INDEX, span));
  }

  // `x.bind_dynamic(axis, T)`: declares axis `axis` of tensor x dynamic. It produces no IR; it binds
  // T to that extent, or checks it against the extent T already has.
  ir::Result<ir::StmtPtr> ParseBindDynamic(py::handle call) {
    const ir::Span span = map_.SpanOf(call);
    py::handle receiver = call.attr("func").attr("value");
    auto tensor = ParseExpr(receiver);
    if (!tensor) return pypto::unexpected(tensor.error());
    const auto* type = (*tensor)->type()->As<ir::TensorType>();
    if (!type)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("bind_dynamic is a method of tensors, not of {}", (*tensor)->type()->str()),
                       map_.SpanOf(receiver));
    py::list args = call.attr("args");
    if (py::len(args) != 2 || py::len(call.attr("keywords")) > 0)
      return MakeError(DiagnosticKind::Syntax, "bind_dynamic takes two arguments: (axis, pl.dynamic dimension)", span);
    auto axis = ParseExpr(args[0]);
    if (!axis) return pypto::unexpected(axis.error());
    auto index = ir::AsConstInt(*axis);
    const int64_t rank = static_cast<int64_t>(type->shape().size());
    if (!index || *index < -rank || *index >= rank)
      return MakeError(DiagnosticKind::Type, fmt::format("bind_dynamic axis must be an integer in [{}, {})", -rank, rank),
                       map_.SpanOf(args[0]));
    const int64_t extent = type->shape()[static_cast<size_t>(*index < 0 ? *index + rank : *index)];
    const std::string dim_name = IsNode(args[1], "Name") ? args[1].attr("id").cast<std::string>() : "";
    auto constant = source_.constants->find(dim_name);
    const auto* dim = constant == source_.constants->end() ? nullptr : std::get_if<DynamicDim>(&constant->second);
    if (!dim)
      return MakeError(DiagnosticKind::Type, "the second argument of bind_dynamic is a pl.dynamic dimension",
                       map_.SpanOf(args[1]), "declare it at module level: T = pl.dynamic(\"T\")");
    const std::string owner = DottedName(receiver);
    auto [it, fresh] = dynamic_.emplace(dim->name, DynamicBinding{extent, owner});
    if (!fresh && it->second.extent != extent)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("axis {} of '{}' is {}, but the dynamic dimension '{}' is {} (from parameter '{}')",
                                   *index, owner, extent, dim->name, it->second.extent, it->second.param),
                       span, "tensors that share a pl.dynamic dimension must agree on its extent");
    return ir::StmtPtr{};
  }

  // `pl.tensor.dim(t, axis)`: the extent of a tensor axis, a compile-time integer here.
  ir::Result<ir::ExprPtr> ParseTensorDim(py::handle node) {
    const ir::Span span = map_.SpanOf(node);
    py::list args = node.attr("args");
    if (py::len(args) != 2 || py::len(node.attr("keywords")) > 0)
      return MakeError(DiagnosticKind::Syntax, "pl.tensor.dim takes two arguments: (tensor, axis)", span);
    auto tensor = ParseExpr(args[0]);
    if (!tensor) return pypto::unexpected(tensor.error());
    const auto* type = (*tensor)->type()->As<ir::TensorType>();
    if (!type)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("pl.tensor.dim reads the extent of a tensor, got {}", (*tensor)->type()->str()),
                       map_.SpanOf(args[0]));
    auto axis = ParseExpr(args[1]);
    if (!axis) return pypto::unexpected(axis.error());
    auto index = ir::AsConstInt(*axis);
    const int64_t rank = static_cast<int64_t>(type->shape().size());
    if (!index || *index < -rank || *index >= rank)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("pl.tensor.dim axis must be an integer in [{}, {}) for {}", -rank, rank,
                                   type->str()),
                       map_.SpanOf(args[1]));
    const int64_t extent = type->shape()[static_cast<size_t>(*index < 0 ? *index + rank : *index)];
    return ir::ExprPtr(std::make_shared<ir::ConstInt>(extent, ir::DataType::INDEX, span));
  }

  // ---- @pl.jit.inline calls ----------------------------------------------------------------------
  // An inline function's body is parsed at each call site, against the call's arguments, and its
  // statements go before the statement that calls it (prelude_); the call's value is what the
  // function returns.

  static bool IsMethodCall(py::handle node, std::string_view method) {
    return IsNode(node, "Call") && IsNode(node.attr("func"), "Attribute") &&
           node.attr("func").attr("attr").cast<std::string>() == method;
  }

  bool IsInlineCall(py::handle node) const {
    if (!IsNode(node, "Call") || !program_.request) return false;
    auto it = program_.request->functions.find(DottedName(node.attr("func")));
    return it != program_.request->functions.end() && it->second.form == "inline";
  }

  // The values an inlined body produced, and its statements.
  struct InlinedBody {
    std::vector<ir::StmtPtr> stmts;
    std::vector<ir::ExprPtr> values;  // what it returns
  };

  ir::Result<ir::ExprPtr> ParseInlineCall(const std::string& name, py::handle node) {
    const ir::Span span = map_.SpanOf(node);
    if (program_.parsing.contains(name))
      return MakeError(DiagnosticKind::Syntax, fmt::format("inline function '{}' calls itself", name), span);
    auto call = ParseSubFunctionCall(name, node);
    if (!call) return pypto::unexpected(call.error());
    call->source.type = source_.type;
    if (auto ok = PassSlicesAsViews(call->source.def, call->args); !ok) return pypto::unexpected(ok.error());
    FunctionParser inliner(program_, call->source);
    inliner.kernel_depth_ = kernel_depth_;
    inliner.manual_scopes_ = manual_scopes_;
    inliner.dynamic_ = dynamic_;
    program_.parsing.insert(name);
    auto body = inliner.InlineBody(call->args, span);
    program_.parsing.erase(name);
    if (!body) return pypto::unexpected(body.error());
    prelude_.insert(prelude_.end(), body->stmts.begin(), body->stmts.end());
    if (body->values.size() == 1) return body->values[0];
    return ir::ExprPtr(std::make_shared<ir::TupleLiteral>(body->values, span));
  }

  // An orchestration slice passed for an inline parameter annotated as a tensor (`x: pl.Tensor`) is a
  // view of its window, as for a kernel's parameter: the body loads from it inside its pl.at scopes.
  ir::Result<bool> PassSlicesAsViews(py::handle def, std::vector<ir::ExprPtr>& args) {
    py::list params = def.attr("args").attr("args");
    for (size_t i = 0; i < args.size() && i < py::len(params); ++i) {
      if (!IsTensorAnnotation(params[i].attr("annotation"))) continue;
      auto view = SliceAsView(args[i]);
      if (!view) return pypto::unexpected(view.error());
      args[i] = *view;
    }
    return true;
  }

  // This parser's function, inlined with `args` for its parameters.
  ir::Result<InlinedBody> InlineBody(const std::vector<ir::ExprPtr>& args, const ir::Span& call_span) {
    InlinedBody inlined;
    py::list params = source_.def.attr("args").attr("args");
    for (size_t i = 0; i < args.size(); ++i) {
      py::handle param = params[i];
      const std::string name = param.attr("arg").cast<std::string>();
      if (auto ok = CheckInlineArg(param, name, args[i]); !ok) return pypto::unexpected(ok.error());
      if (args[i]->As<ir::Var>()) {  // the caller's variable, under the parameter's name
        env_[name] = std::static_pointer_cast<const ir::Var>(args[i]);
        continue;
      }
      auto var = std::make_shared<ir::Var>(name, args[i]->type(), map_.SpanOf(param));
      RecordScalar(var, args[i]);
      env_[name] = var;
      inlined.stmts.push_back(std::make_shared<ir::AssignStmt>(var, args[i], call_span));
    }
    py::list body = source_.def.attr("body");
    for (size_t i = 0; i < py::len(body); ++i) {
      py::handle stmt = body[i];
      if (IsNode(stmt, "Return")) {
        if (i + 1 != py::len(body))
          return MakeError(DiagnosticKind::Syntax, "an inline function returns only at its end", map_.SpanOf(stmt));
        auto values = ReturnValues(stmt);
        if (!values) return pypto::unexpected(values.error());
        inlined.values = std::move(*values);
        break;
      }
      auto parsed = ParseStatement(stmt);
      if (!parsed) return pypto::unexpected(parsed.error());
      Append(inlined.stmts, *parsed);
    }
    return inlined;
  }

  // An inline parameter's annotation checks the argument: its shape and dtype, binding the dynamic
  // dimensions it names. pl.Out/pl.InOut mean nothing on an inline parameter (the caller's tensor is
  // written in place), so they are dropped with a DeprecationWarning, as upstream does.
  ir::Result<bool> CheckInlineArg(py::handle param, const std::string& name, const ir::ExprPtr& arg) {
    py::handle annotation = param.attr("annotation");
    if (annotation.is_none()) return true;
    const auto* tensor = arg->type()->As<ir::TensorType>();
    std::optional<TensorSpec> spec;
    if (tensor) spec = TensorSpec{tensor->shape(), tensor->dtype()};
    const bool scalar_annotation = IsNode(annotation, "Subscript") &&
                                   DottedName(annotation.attr("value")) == "pl.Scalar";
    if (!tensor && !scalar_annotation && !arg->type()->As<ir::ScalarType>())
      return true;  // tiles and other values: the body's ops check them
    if (!tensor && !scalar_annotation)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("parameter '{}' expects a tensor, got {}", name, arg->type()->str()),
                       map_.SpanOf(param));
    auto resolved = ResolveParam(annotation, name, spec ? &*spec : nullptr, map_, source_.constants, &dynamic_);
    if (!resolved) return pypto::unexpected(resolved.error());
    if (resolved->direction != ir::ParamDirection::In)
      PyErr_WarnEx(PyExc_DeprecationWarning,
                   fmt::format("{}: pl.Out/pl.InOut on parameter '{}' of an inline function has no effect",
                               map_.SpanOf(annotation).str(), name)
                       .c_str(),
                   1);
    return true;
  }

  // `return a, b`: the values, in order (none for a bare return).
  ir::Result<std::vector<ir::ExprPtr>> ReturnValues(py::handle stmt) {
    std::vector<ir::ExprPtr> values;
    py::handle value = stmt.attr("value");
    if (value.is_none()) return values;
    std::vector<py::handle> nodes;
    if (IsNode(value, "Tuple")) {
      for (auto element : value.attr("elts")) nodes.push_back(element);
    } else {
      nodes.push_back(value);
    }
    for (auto node : nodes) {
      auto expr = ParseExpr(node);
      if (!expr) return pypto::unexpected(expr.error());
      values.push_back(*expr);
    }
    return values;
  }

  // `a, b = self.k(x, a, b)`: a function of the program that returns several tensors writes them
  // into its output parameters (it returns its pl.Out / pl.InOut parameters in order), so the call
  // is a statement and each name means the argument passed for the corresponding output.
  ir::Result<ir::StmtPtr> ParseMultiResultCall(py::handle stmt, py::handle target) {
    const ir::Span span = map_.SpanOf(stmt);
    auto value = ParseExpr(stmt.attr("value"));
    if (!value) return pypto::unexpected(value.error());
    const auto* call = (*value)->As<ir::Call>();
    const auto* tuple = (*value)->type()->As<ir::TupleType>();
    const Signature* callee = nullptr;
    if (call && !call->is_op_call() && program_.methods)
      if (auto it = program_.methods->find(call->callee()); it != program_.methods->end()) callee = &it->second;
    if (!tuple || !callee)
      return MakeError(DiagnosticKind::Syntax,
                       "several names are assigned the results of a call to a function of the program that returns "
                       "several tensors",
                       map_.SpanOf(target));
    py::list names = target.attr("elts");
    std::vector<size_t> outputs;
    for (size_t i = 0; i < callee->directions.size(); ++i)
      if (callee->directions[i] != ir::ParamDirection::In) outputs.push_back(i);
    if (outputs.size() != py::len(names) || tuple->elements().size() != py::len(names))
      return MakeError(DiagnosticKind::Type,
                       fmt::format("{}() returns {} tensors through {} output parameters, assigned to {} names",
                                   call->callee(), tuple->elements().size(), outputs.size(), py::len(names)),
                       map_.SpanOf(target));
    for (size_t k = 0; k < outputs.size(); ++k) {
      const auto& arg = call->args()[outputs[k]];
      auto var = std::dynamic_pointer_cast<const ir::Var>(arg);
      if (!IsNode(names[k], "Name") || !var || !tuple->elements()[k]->equals(*var->type()))
        return MakeError(DiagnosticKind::Type,
                         fmt::format("result {} of {}() is its output parameter '{}', so it is assigned a plain "
                                     "name and has that argument's type ({})",
                                     k, call->callee(), callee->params[outputs[k]]->name_hint(),
                                     tuple->elements()[k]->str()),
                         map_.SpanOf(names[k]));
      const std::string name = names[k].attr("id").cast<std::string>();
      env_[name] = std::const_pointer_cast<ir::Var>(var);
      unavailable_.erase(name);
      assigned_types_[name] = var->type();
    }
    return ir::StmtPtr(std::make_shared<ir::EvalStmt>(*value, span));
  }

  // `y = inline_fn(...)` / `a, b = inline_fn(...)`: the names are the values the body returned.
  ir::Result<ir::StmtPtr> BindInlineResult(py::handle target, py::handle call) {
    auto value = ParseExpr(call);
    if (!value) return pypto::unexpected(value.error());
    std::vector<py::handle> names;
    if (IsNode(target, "Tuple")) {
      for (auto element : target.attr("elts")) names.push_back(element);
    } else {
      names.push_back(target);
    }
    std::vector<ir::ExprPtr> values = {*value};
    if (const auto* tuple = (*value)->As<ir::TupleLiteral>(); tuple && names.size() != 1) values = tuple->elements();
    if (values.size() != names.size())
      return MakeError(DiagnosticKind::Type,
                       fmt::format("{}() returns {} values, assigned to {} names", DottedName(call.attr("func")),
                                   values.size(), names.size()),
                       map_.SpanOf(target));
    std::vector<ir::StmtPtr> stmts;
    for (size_t i = 0; i < names.size(); ++i) {
      if (!IsNode(names[i], "Name"))
        return MakeError(DiagnosticKind::Syntax, "the results of an inline call are assigned to plain names",
                         map_.SpanOf(names[i]));
      const std::string name = names[i].attr("id").cast<std::string>();
      if (values[i]->As<ir::Var>()) {
        auto var = std::static_pointer_cast<const ir::Var>(values[i]);
        env_[name] = var;
        unavailable_.erase(name);
        assigned_types_[name] = var->type();
        continue;
      }
      auto var = std::make_shared<ir::Var>(name, values[i]->type(), map_.SpanOf(names[i]));
      RecordScalar(var, values[i]);
      env_[name] = var;
      unavailable_.erase(name);
      assigned_types_[name] = var->type();
      stmts.push_back(std::make_shared<ir::AssignStmt>(var, values[i], map_.SpanOf(names[i])));
    }
    return Seq(std::move(stmts), map_.SpanOf(target));
  }

  // An entry without a `->` annotation (upstream's Opaque `main(self, x, out: pl.Out[...])` that ends
  // `return out`) returns what its body returns: nothing calls it, so nothing needs the types first.
  static bool ReturnsUndeclared(const Signature& signature) {
    return signature.def.attr("returns").is_none() &&
           (signature.type == ir::FunctionType::Opaque || signature.type == ir::FunctionType::Orchestration);
  }

  // A method returns what its `->` annotation declares.
  static ir::Result<bool> CheckReturn(const Signature& signature, const std::vector<ir::ExprPtr>& values,
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
  ir::Result<bool> CheckReturnAnnotation(const Signature& signature, const std::vector<ir::ExprPtr>& values,
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

  static ir::ExprPtr ConstantExpr(const Constant& value, const ir::Span& span) {
    if (const auto* b = std::get_if<bool>(&value)) return std::make_shared<ir::ConstBool>(*b, span);
    if (const auto* i = std::get_if<int64_t>(&value))
      return std::make_shared<ir::ConstInt>(*i, ir::DataType::INDEX, span);
    return std::make_shared<ir::ConstFloat>(std::get<double>(value), ir::DataType::FP32, span);
  }

  ir::Result<ir::ExprPtr> ParseBinOp(py::handle node) {
    static const std::map<std::string, ir::BinaryOp> kOps = {
        {"Add", ir::BinaryOp::Add},           {"Sub", ir::BinaryOp::Sub},      {"Mult", ir::BinaryOp::Mul},
        {"FloorDiv", ir::BinaryOp::FloorDiv}, {"Mod", ir::BinaryOp::FloorMod}, {"Div", ir::BinaryOp::FloatDiv},
        {"LShift", ir::BinaryOp::Shl},        {"RShift", ir::BinaryOp::Shr}};
    std::string op = NodeType(node.attr("op"));
    auto it = kOps.find(op);
    if (it == kOps.end())
      return MakeError(DiagnosticKind::Syntax, fmt::format("the '{}' operator is not supported on scalars yet", op),
                       map_.SpanOf(node));
    auto lhs = ParseExpr(node.attr("left"));
    if (!lhs) return lhs;
    auto rhs = ParseExpr(node.attr("right"));
    if (!rhs) return rhs;
    return ir::MakeBinary(it->second, *lhs, *rhs, map_.SpanOf(node));
  }

  // `a < b` and the other comparisons, one at a time.
  ir::Result<ir::ExprPtr> ParseCompare(py::handle node) {
    static const std::map<std::string, ir::BinaryOp> kOps = {
        {"Eq", ir::BinaryOp::Eq}, {"NotEq", ir::BinaryOp::Ne}, {"Lt", ir::BinaryOp::Lt},
        {"LtE", ir::BinaryOp::Le}, {"Gt", ir::BinaryOp::Gt}, {"GtE", ir::BinaryOp::Ge}};
    py::list ops = node.attr("ops");
    if (py::len(ops) != 1)
      return MakeError(DiagnosticKind::Syntax, "chained comparisons are not supported; compare two values at a time",
                       map_.SpanOf(node));
    auto it = kOps.find(NodeType(ops[0]));
    if (it == kOps.end())
      return MakeError(DiagnosticKind::Syntax, fmt::format("the '{}' comparison is not supported", NodeType(ops[0])),
                       map_.SpanOf(node));
    auto lhs = ParseExpr(node.attr("left"));
    if (!lhs) return lhs;
    auto rhs = ParseExpr(py::list(node.attr("comparators"))[0]);
    if (!rhs) return rhs;
    if (auto known = CompareConstants(it->second, **lhs, **rhs))
      return ir::ExprPtr(std::make_shared<ir::ConstBool>(*known, map_.SpanOf(node)));
    return ir::MakeBinary(it->second, *lhs, *rhs, map_.SpanOf(node));
  }

  // Two compile-time numbers compare at compile time, so an `if` on module constants keeps only the
  // branch it takes (the other may not even type-check, e.g. a slice of width zero).
  static std::optional<bool> CompareConstants(ir::BinaryOp op, const ir::Expr& lhs, const ir::Expr& rhs) {
    const auto *li = lhs.As<ir::ConstInt>(), *ri = rhs.As<ir::ConstInt>();
    const auto *lf = lhs.As<ir::ConstFloat>(), *rf = rhs.As<ir::ConstFloat>();
    if (!(li || lf) || !(ri || rf)) return std::nullopt;
    if (li && ri) return ir::EvaluateComparison(op, li->value(), ri->value());
    return ir::EvaluateComparison(op, li ? static_cast<double>(li->value()) : lf->value(),
                                  ri ? static_cast<double>(ri->value()) : rf->value());
  }


  // The builtins printed IR uses: min(a, b) / max(a, b) on scalars, and float("inf") / float("nan").
  std::optional<ir::Result<ir::ExprPtr>> ParseBuiltinCall(const std::string& name, py::handle node) {
    if (name != "min" && name != "max" && name != "float") return std::nullopt;
    if (env_.contains(name) || source_.constants->contains(name)) return std::nullopt;
    py::list args = node.attr("args");
    const ir::Span span = map_.SpanOf(node);
    if (py::len(node.attr("keywords")) > 0)
      return MakeError(DiagnosticKind::Syntax, fmt::format("{}() takes no keyword arguments here", name), span);
    if (name == "float") {
      if (py::len(args) != 1 || !IsNode(args[0], "Constant"))
        return MakeError(DiagnosticKind::Syntax, "float() takes one literal, e.g. float(\"inf\")", span);
      try {
        double value = py::module_::import("builtins").attr("float")(args[0].attr("value")).cast<double>();
        return ir::ExprPtr(std::make_shared<ir::ConstFloat>(value, ir::DataType::FP32, span));
      } catch (py::error_already_set&) {
        return MakeError(DiagnosticKind::Type, "float() of a literal that is not a number", span);
      }
    }
    if (py::len(args) != 2)
      return MakeError(DiagnosticKind::Syntax, fmt::format("{}() takes two scalars here", name), span);
    auto lhs = ParseExpr(args[0]);
    if (!lhs) return lhs;
    auto rhs = ParseExpr(args[1]);
    if (!rhs) return rhs;
    return ir::MakeBinary(name == "min" ? ir::BinaryOp::Min : ir::BinaryOp::Max, *lhs, *rhs, span);
  }

  // Only negation, which folds into constants and otherwise becomes `0 - x`.
  ir::Result<ir::ExprPtr> ParseUnaryOp(py::handle node) {
    if (NodeType(node.attr("op")) != "USub")
      return MakeError(DiagnosticKind::Syntax, "only unary minus is supported on scalars", map_.SpanOf(node));
    auto operand = ParseExpr(node.attr("operand"));
    if (!operand) return operand;
    ir::Span span = map_.SpanOf(node);
    if (const auto* f = (*operand)->As<ir::ConstFloat>())
      return ir::ExprPtr(std::make_shared<ir::ConstFloat>(-f->value(), ir::DataType::FP32, span));
    return ir::MakeBinary(ir::BinaryOp::Sub, std::make_shared<ir::ConstInt>(0, ir::DataType::INDEX, span), *operand,
                          span);
  }

  ir::Result<ir::ExprPtr> ParseConstant(py::handle node) {
    py::handle value = node.attr("value");
    ir::Span span = map_.SpanOf(node);
    if (py::isinstance<py::bool_>(value)) return ir::ExprPtr(std::make_shared<ir::ConstBool>(value.cast<bool>(), span));
    if (py::isinstance<py::int_>(value))
      return ir::ExprPtr(std::make_shared<ir::ConstInt>(value.cast<int64_t>(), ir::DataType::INDEX, span));
    if (py::isinstance<py::float_>(value))
      return ir::ExprPtr(std::make_shared<ir::ConstFloat>(value.cast<double>(), ir::DataType::FP32, span));
    // `prev = None` in orchestration code: a TaskId naming no task (pl.system.task_invalid()), which
    // a `deps=[prev]` before the first launch waits for as nothing.
    if (value.is_none() && kernel_depth_ == 0) {
      auto invalid = ir::OpRegistry::Get().CreateCall("system.task_invalid", {}, {}, span);
      if (!invalid) return pypto::unexpected(invalid.error());
      return ir::ExprPtr(*invalid);
    }
    return MakeError(DiagnosticKind::Type, "only int, float and bool constants are supported", span);
  }

  // `pl.const(0, pl.INT32)`: a number of the dtype named.
  ir::Result<ir::ExprPtr> ParseTypedConstant(py::handle node) {
    const ir::Span span = map_.SpanOf(node);
    py::list args = node.attr("args");
    const auto dtype = py::len(args) == 2 ? DtypeOf(args[1], source_.constants) : std::nullopt;
    auto value = py::len(args) == 2 ? ParseExpr(args[0]) : ir::Result<ir::ExprPtr>(ir::ExprPtr{});
    if (!value) return pypto::unexpected(value.error());
    if (!dtype || !*value)
      return MakeError(DiagnosticKind::Syntax, "pl.const takes a number and a dtype: pl.const(0, pl.INT32)", span);
    const ir::DataType type = *dtype;
    if (const auto* i = (*value)->As<ir::ConstInt>(); i && ir::IsInteger(type))
      return ir::ExprPtr(std::make_shared<ir::ConstInt>(i->value(), type, span));
    if (const auto* i = (*value)->As<ir::ConstInt>(); i && ir::IsFloat(type))
      return ir::ExprPtr(std::make_shared<ir::ConstFloat>(static_cast<double>(i->value()), type, span));
    if (const auto* f = (*value)->As<ir::ConstFloat>(); f && ir::IsFloat(type))
      return ir::ExprPtr(std::make_shared<ir::ConstFloat>(f->value(), type, span));
    return MakeError(DiagnosticKind::Type, "pl.const takes a number literal of its dtype's kind", span);
  }

  // `pl.no_dep(t)` at a call argument turns off upstream's dependency tracking of t for that one
  // task, an opt-out the author takes when deps= already orders it. As for pl.at(no_dep_args=...),
  // tracking t anyway only orders the task after t's earlier writers and readers, which computes
  // the same results, so the marker is the tensor itself (as upstream's is outside a call).
  ir::Result<ir::ExprPtr> ParseNoDep(py::handle node) {
    return ParseSoleTensorArgument(node, "pl.no_dep takes one tensor: pl.no_dep(t)", "pl.no_dep takes a tensor");
  }

  // The one tensor argument of a marker call that stands for its tensor (pl.no_dep(t),
  // pld.get_comm_ctx(window)): `usage` when the call is malformed, `expected` for a non-tensor.
  ir::Result<ir::ExprPtr> ParseSoleTensorArgument(py::handle node, const std::string& usage,
                                                  const std::string& expected) {
    py::list args = node.attr("args");
    if (py::len(args) != 1 || py::len(node.attr("keywords")) != 0)
      return MakeError(DiagnosticKind::Syntax, usage, map_.SpanOf(node));
    auto tensor = ParseExpr(args[0]);
    if (!tensor) return pypto::unexpected(tensor.error());
    if (!(*tensor)->type()->As<ir::TensorType>())
      return MakeError(DiagnosticKind::Type, fmt::format("{}, got {}", expected, (*tensor)->type()->str()),
                       map_.SpanOf(args[0]));
    return *tensor;
  }

  ir::Result<ir::ExprPtr> ParseCall(py::handle node) {
    std::string name = DottedName(node.attr("func"));
    ir::Span span = map_.SpanOf(node.attr("func"));
    if (IsInlineCall(node)) return ParseInlineCall(name, node);
    if (program_.request && program_.request->functions.contains(name)) return ParseKernelCall(name, node);
    if (name == "pl.tensor.dim" || name == "pl.dim") return ParseTensorDim(node);
    if (name == "pl.assemble" || name == "pl.tile.assemble" || name == "pl.tensor.assemble") return ParseAssemble(node);
    if (auto form = IndexOpForm(name, node)) {
      if (!*form) return pypto::unexpected(form->error());
      return ParseExpr(**form);
    }
    if (name == "pl.slice" || name == "pl.tensor.slice") {  // in orchestration code too (see ParseRegion)
      auto load = SliceOfTensorAsLoad(node);
      if (!load) return pypto::unexpected(load.error());
      if (*load) {
        auto parsed = ParseCall(**load);
        if (parsed || kernel_depth_ > 0) return parsed;
        if (auto view = OverhangingSliceView(**load)) return *view;
        return parsed;
      }
    }
    if ((name == "pl.create_tensor" || name == "pl.tensor.create") && kernel_depth_ > 0)
      return ParseCall(CreatedTensorAsTile(node));
    if ((name == "pl.slice" || name == "pl.tensor.slice") && kernel_depth_ == 0)
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("'{}' of a tensor in orchestration code (a view at an offset, passed to kernels) "
                                   "is not supported yet",
                                   name),
                       span, "slice the tensor inside the pl.at scope that uses it, where pl.slice is a load");
    if (IsElementAccess(name) && HasBareIndex(node)) return ParseCall(WithIndexList(node));
    if (IsDumpTag(node))
      return MakeError(DiagnosticKind::Syntax, "pl.dump_tag is a statement and has no value", span,
                       "write pl.dump_tag(t) on a line of its own");
    if (program_.methods && name.starts_with("self.")) return ParseMethodCall(name.substr(5), node);
    if (!program_.methods && program_.request && JitFunctionName(name) != name)  // `self.kernel(...)`
      return ParseKernelCall(JitFunctionName(name), node);
    if (name == "pl.system.task_dummy") return ParseTaskDummy(node);
    if (name == "pl.create_l1" || name == "pl.tensor.create_l1") return ParseCreateL1(node);
    if (name == "pl.gather_row" || name == "pl.tensor.gather_row") return ParseGatherRow(node);
    if (name == "pl.expand_clone" || name == "pl.tensor.expand_clone") return ParseExpandClone(node);
    if (name == "pl.const") return ParseTypedConstant(node);
    if (name == "pl.no_dep") return ParseNoDep(node);
    // Upstream's tensor-level xor and xors take no scratch tile; in a kernel their tile op gets a fresh one.
    const bool scratch_for_tensor_xor = kernel_depth_ > 0 && (name == "pl.tensor.xor" || name == "pl.tensor.xors");
    if (kernel_depth_ > 0) name = KernelSpelling(name);
    if (IsGetCommCtx(name)) return ParseCommCtx(node);
    if (auto put = IsPutOrGet(name)) return ParsePutGet(node, *put);
    const std::string spelled = name;  // what errors call the op: the user's spelling
    if (auto comm = CommOpSpelling(name)) name = *comm;
    if (auto builtin = ParseBuiltinCall(name, node)) return *builtin;
    if (!name.starts_with("pl."))
      return MakeError(DiagnosticKind::UnknownOperation,
                       program_.methods
                           ? fmt::format("cannot call '{}' in a @pl.program; only pl.* operations and the program's "
                                         "functions (self.<name>) are available",
                                         name.empty() ? "<expression>" : name)
                           : fmt::format("cannot call '{}' in a kernel; only pl.* operations and @pl.jit.incore "
                                         "functions are available",
                                         name.empty() ? "<expression>" : name),
                       span);
    std::vector<std::pair<ArgValue, py::handle>> positional;
    for (auto arg : node.attr("args")) {
      auto value = ParseArgValue(arg);
      if (!value) return pypto::unexpected(value.error());
      positional.emplace_back(std::move(*value), arg);
    }
    std::vector<std::tuple<std::string, ArgValue, py::handle>> keywords;
    for (auto keyword : node.attr("keywords")) {
      if (keyword.attr("arg").is_none())
        return MakeError(DiagnosticKind::Syntax, "**kwargs are not supported in op calls", map_.SpanOf(keyword));
      // `name=None` leaves an optional argument out, as Python's default does (gm_workspace=None), and
      // so does a name bound to None where the program is built (valid_shape=valid_shape).
      if (IsNode(keyword.attr("value"), "Constant") && keyword.attr("value").attr("value").is_none()) continue;
      if (NamesNone(keyword.attr("value"))) continue;
      // `atomic=pl.AtomicType.Add` (pl.store): the op's "add" attribute; AtomicType.None_ leaves it out.
      if (keyword.attr("arg").cast<std::string>() == "atomic" &&
          (DottedName(keyword.attr("value")).starts_with("pl.AtomicType.") ||
           DottedName(keyword.attr("value")).starts_with("pld.AtomicType."))) {
        auto atomic = AtomicKeyword(name, keyword.attr("value"));
        if (!atomic) return pypto::unexpected(atomic.error());
        if (!*atomic) continue;
        keywords.emplace_back("atomic", ArgValue(ir::OpAttr(std::string("add"))), keyword.attr("value"));
        continue;
      }
      auto value = ParseArgValue(keyword.attr("value"));
      if (!value) return pypto::unexpected(value.error());
      keywords.emplace_back(keyword.attr("arg").cast<std::string>(), std::move(*value), keyword.attr("value"));
    }
    bool loaded_tensor = false;  // a whole tensor operand became a tile
    // The operands a kernel loads when given whole tensors: all of a unified op's, the value of
    // pl.store (`pl.store(src, offset, dst)` copies the tensor src into a window of dst), and the
    // operand of pl.reshape (`pl.reshape(inv_rms, [64, 1])` of a tile an earlier scope computed,
    // handed over as a tensor: the reshape is the tile's, as upstream's tensor-to-tile lowering has it).
    const size_t loadable = kernel_depth_ == 0                             ? 0
                            : IsUnifiedCompute(name)                       ? positional.size()
                            : name == "pl.store" || name == "pl.reshape"   ? std::min<size_t>(1, positional.size())
                                                                           : 0;
    if (loadable > 0) {
      for (auto& [value, arg] : std::span(positional).first(loadable)) {
        auto* expr = std::get_if<ir::ExprPtr>(&value);
        if (!expr || !(*expr)->type()->As<ir::TensorType>()) continue;
        auto loaded = LoadWhole(*expr, map_.SpanOf(arg));
        if (!loaded) return pypto::unexpected(loaded.error());
        *expr = *loaded;
        loaded_tensor = true;
      }
    }
    // A reshape or transpose of an orchestration slice views the slice's view.
    if (kernel_depth_ == 0 && IsViewOfWhole(name) && !positional.empty())
      if (auto* expr = std::get_if<ir::ExprPtr>(&positional[0].first)) {
        auto view = SliceAsView(*expr);
        if (!view) return pypto::unexpected(view.error());
        *expr = *view;
      }
    std::vector<ir::ExprPtr> operands;
    for (const auto& [value, arg] : positional)
      if (const auto* expr = std::get_if<ir::ExprPtr>(&value)) operands.push_back(*expr);
    if (auto scalar = ScalarCall(name, operands, positional.size(), keywords.size(), map_.SpanOf(node))) return *scalar;

    auto high_precision = TakeHighPrecision(name, keywords);
    if (!high_precision) return pypto::unexpected(high_precision.error());
    std::vector<std::string> keyword_names;
    for (const auto& keyword : keywords) keyword_names.push_back(std::get<0>(keyword));
    auto form = SelectForm(name, keyword_names, span);
    if (!form) return pypto::unexpected(form.error());
    if (kernel_depth_ > 0 && IsUnifiedCompute(name)) {
      auto broadcast = RowBroadcastForm(*form, operands, positional, span);
      if (!broadcast) return pypto::unexpected(broadcast.error());
      if (*broadcast) {
        form = **broadcast;
        operands.clear();
        for (const auto& [value, arg] : positional)
          if (const auto* expr = std::get_if<ir::ExprPtr>(&value)) operands.push_back(*expr);
      }
    }
    auto op = ResolveOp(*form, operands, kernel_depth_ > 0 ? CallContext::Kernel : CallContext::Orchestration, span);
    if (!op) return pypto::unexpected(op.error());
    if ((*op)->name == "tile.mrgsort_format2")
      if (auto ok = PlaceMergeScratch(positional, keywords, span); !ok) return pypto::unexpected(ok.error());
    if ((*op)->name == "tile.mgather") PlaceMgatherOperands(positional, keywords);
    CallBuilder call(spelled, **op, span);
    const auto& params = (*op)->params;
    for (size_t i = 0; i < positional.size(); ++i) {
      if (i >= params.size())
        return MakeError(DiagnosticKind::InvalidOperation,
                         fmt::format("'{}' takes at most {} argument{}, got {}", name, params.size(),
                                     params.size() == 1 ? "" : "s", positional.size()),
                         span);
      if (auto ok = call.Bind(params[i], std::move(positional[i].first), map_.SpanOf(positional[i].second)); !ok)
        return pypto::unexpected(ok.error());
    }
    for (auto& [key, value, arg] : keywords) {
      auto param = std::find_if(params.begin(), params.end(), [&](const ir::OpParam& p) { return p.name == key; });
      if (param == params.end()) {
        std::vector<std::string> names;
        for (const auto& p : params) names.push_back(p.name);
        return MakeError(DiagnosticKind::InvalidOperation,
                         fmt::format("'{}' has no argument '{}' (arguments: {})", spelled, key, fmt::join(names, ", ")),
                         map_.SpanOf(arg));
      }
      if (auto ok = call.Bind(*param, std::move(value), map_.SpanOf(arg)); !ok) return pypto::unexpected(ok.error());
    }
    if (kernel_depth_ > 0 && !operands.empty())
      if (auto ok = BindDefaultScratch(name, **op, operands[0], call, map_.SpanOf(node)); !ok)
        return pypto::unexpected(ok.error());
    if ((*high_precision || scratch_for_tensor_xor) && kernel_depth_ > 0 && !operands.empty())
      if (auto ok = BindPrecisionScratch(**op, operands[0], call, map_.SpanOf(node)); !ok)
        return pypto::unexpected(ok.error());
    if (declared_tile_) BindDeclaredPopType(**op, call, map_.SpanOf(node));
    if (auto ok = BindRegionSplit(**op, call, map_.SpanOf(node)); !ok) return pypto::unexpected(ok.error());
    auto built = call.Build(map_.SpanOf(node));
    if (built && loaded_tensor && name == "pl.cmp") return MaskAsValues(*built, operands[0], map_.SpanOf(node));
    return built;
  }

  // `pl.cmp` of whole tensors is upstream's tensor.cmp: 1 where the comparison holds and 0 elsewhere,
  // in the left operand's dtype (tile.sel of the packed mask between two filled tiles), not the mask.
  ir::Result<ir::ExprPtr> MaskAsValues(const ir::ExprPtr& mask, const ir::ExprPtr& lhs, const ir::Span& span) {
    const auto& tile = *lhs->type()->As<ir::TileType>();
    const auto& registry = ir::OpRegistry::Get();
    std::vector<ir::ExprPtr> dims;
    for (int64_t dim : tile.shape()) dims.push_back(std::make_shared<ir::ConstInt>(dim, ir::DataType::INDEX, span));
    auto filled = [&](double value) -> ir::Result<ir::CallPtr> {
      const ir::ExprPtr constant =
          ir::IsFloat(tile.dtype()) ? ir::ExprPtr(std::make_shared<ir::ConstFloat>(value, tile.dtype(), span))
                                    : ir::ExprPtr(std::make_shared<ir::ConstInt>(static_cast<int64_t>(value),
                                                                                 tile.dtype(), span));
      return registry.CreateCall("tile.full", {Tuple(dims, span), constant}, {{"dtype", ir::OpAttr(tile.dtype())}},
                                 span);
    };
    auto ones = filled(1);
    if (!ones) return pypto::unexpected(ones.error());
    auto zeros = filled(0);
    if (!zeros) return pypto::unexpected(zeros.error());
    auto tmp = CreateTileLike(ir::TileType({1, 32}, ir::DataType::UINT8, ir::MemorySpace::Vec), span);
    if (!tmp) return pypto::unexpected(tmp.error());
    auto sel = registry.CreateCall("tile.sel", {mask, *ones, *zeros, *tmp}, {}, span);
    if (!sel) return pypto::unexpected(sel.error());
    return ir::ExprPtr(*sel);
  }

  // tile.mrgsort_format2 takes its scratch tile after the sorted lists, however many there are: a
  // `tmp=` keyword moves there, and without one (the unified `pl.mrgsort(a, b)` leaves it to the
  // compiler) a fresh tile as long as the lists together goes there. Five positional arguments are
  // four lists and the scratch tile, as upstream spells a 4-way merge.
  ir::Result<bool> PlaceMergeScratch(std::vector<std::pair<ArgValue, py::handle>>& positional,
                                     std::vector<std::tuple<std::string, ArgValue, py::handle>>& keywords,
                                     const ir::Span& span) {
    auto tmp = std::find_if(keywords.begin(), keywords.end(),
                            [](const auto& keyword) { return std::get<0>(keyword) == "tmp"; });
    const size_t lists = positional.size();
    if (lists < 2 || (tmp != keywords.end() && lists > 4))
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("pl.mrgsort merges 2 to 4 sorted tiles, got {}", lists), span,
                       "merge the sorted runs of a single tile with block_len=...");
    if (tmp != keywords.end()) {
      positional.emplace_back(std::move(std::get<1>(*tmp)), std::get<2>(*tmp));
      keywords.erase(tmp);
      return true;
    }
    if (lists > 4) return true;
    std::vector<ir::ExprPtr> sources;
    for (const auto& [value, arg] : positional) {
      const auto* expr = std::get_if<ir::ExprPtr>(&value);
      sources.push_back(expr ? *expr : nullptr);
    }
    auto scratch = MergeScratchTile(sources, span);
    if (!scratch) return pypto::unexpected(scratch.error());
    positional.emplace_back(ArgValue(*scratch), positional.back().second);
    return true;
  }

  // tile.mgather's optional operands close up, as upstream lays them out: `scratch=` (Mat element
  // mode) and then `valid_shape=` (Mat) follow idx, so that in Mat row mode the valid shape is the
  // third argument. A third positional argument that is not a value is upstream's positional
  // `coalesce` ("row" or "elem").
  static void PlaceMgatherOperands(std::vector<std::pair<ArgValue, py::handle>>& positional,
                                   std::vector<std::tuple<std::string, ArgValue, py::handle>>& keywords) {
    if (positional.size() == 3 && std::holds_alternative<ir::OpAttr>(positional[2].first)) {
      keywords.emplace_back("coalesce", std::move(positional[2].first), positional[2].second);
      positional.pop_back();
    }
    if (positional.size() != 2) return;
    for (const char* name : {"scratch", "valid_shape"}) {
      auto keyword = std::find_if(keywords.begin(), keywords.end(),
                                  [&](const auto& keyword) { return std::get<0>(keyword) == name; });
      if (keyword == keywords.end()) continue;
      positional.emplace_back(std::move(std::get<1>(*keyword)), std::get<2>(*keyword));
      keywords.erase(keyword);
    }
  }

  // A tpop without shape= and dtype= receives the tile its assignment's annotation declares.
  void BindDeclaredPopType(const ir::OpDef& op, CallBuilder& call, const ir::Span& span) {
    if (op.name != "tile.tpop_from_aic" && op.name != "tile.tpop_from_aiv") return;
    const auto& tile = *declared_tile_->As<ir::TileType>();
    for (const ir::OpParam& param : op.params) {
      if (call.Has(param)) continue;
      if (param.name == "shape") {
        std::vector<ir::ExprPtr> dims;
        for (int64_t dim : tile.shape()) dims.push_back(std::make_shared<ir::ConstInt>(dim, ir::DataType::INDEX, span));
        (void)call.Bind(param, ArgValue(Tuple(dims, span)), span);
      } else if (param.name == "dtype") {
        (void)call.Bind(param, ArgValue(ir::OpAttr(tile.dtype())), span);
      }
    }
  }

  // The gathers and scatters by index written in one of upstream's argument forms, as the one call
  // that form is (index_op_forms.h); nullopt for every other call. Inside a kernel, pl.gather and
  // pl.tensor.gather with kvalue= are the compare form and without mask_pattern= the index form
  // (torch.gather), pl.scatter / pl.tensor.scatter either form of Tensor.scatter_, and
  // pl.paged_gather the tile op (its tensors are read where they are, not loaded); scatter_update
  // takes its dim first or last in any spelling.
  std::optional<ir::Result<py::object>> IndexOpForm(const std::string& name, py::handle node) {
    const bool kernel = kernel_depth_ > 0;
    if (kernel && IsCompareGather(node)) return GatherCompare(node, map_);
    if (kernel && (name == "pl.gather" || name == "pl.tensor.gather") && !HasKeyword(node, "mask_pattern"))
      return GatherAlongDim(node, map_);
    if (kernel && (name == "pl.scatter" || name == "pl.tensor.scatter")) return ScatterForm(node, map_);
    if (kernel && (name == "pl.paged_gather" || name == "pl.tensor.paged_gather")) {
      std::vector<py::object> args;
      for (auto arg : node.attr("args")) args.push_back(py::reinterpret_borrow<py::object>(arg));
      return RewrittenCall(node, "pl.tile.paged_gather", args, py::list(node.attr("keywords")));
    }
    if (name == "pl.scatter_update" || name == "pl.tensor.scatter_update" || name == "pl.tile.scatter_update") {
      auto form = ScatterUpdateForm(node, map_);
      if (form && form->is_none()) return std::nullopt;
      return form;
    }
    return std::nullopt;
  }

  // Inside a kernel, `pl.tensor.X` of an op that only tiles have (pl.tensor.sort32, pl.tensor.ci) is
  // the unified `pl.X`: whole tensors given to it are loaded as tiles, as upstream's tensor-to-tile
  // conversion turns tensor.X into tile.X.
  static std::string KernelSpelling(const std::string& name) {
    constexpr std::string_view kTensor = "pl.tensor.";
    if (!name.starts_with(kTensor)) return name;
    const std::string base = name.substr(kTensor.size());
    if (ir::OpRegistry::Get().Find("tensor." + base)) return name;
    return "pl." + base;
  }

  // `pl.mul(t, col)` of a [M, N] tile and a [M, 1] column: upstream's tensor-to-tile conversion makes
  // it the row broadcast `pl.row_expand_mul(t, col)` (add, sub, mul and div). A column on the left
  // of add or mul is swapped to the right; of sub or div it would change the result, so it is refused.
  ir::Result<std::optional<std::string>> RowBroadcastForm(const std::string& form,
                                                          const std::vector<ir::ExprPtr>& operands,
                                                          std::vector<std::pair<ArgValue, py::handle>>& positional,
                                                          const ir::Span& span) const {
    static const std::set<std::string, std::less<>> kBroadcasting = {"pl.add", "pl.sub", "pl.mul", "pl.div"};
    if (!kBroadcasting.contains(form) || operands.size() != 2 || positional.size() != 2) return std::nullopt;
    const auto* lhs = operands[0]->type()->As<ir::TileType>();
    const auto* rhs = operands[1]->type()->As<ir::TileType>();
    if (!lhs || !rhs || lhs->shape().size() != 2 || rhs->shape().size() != 2) return std::nullopt;
    const auto is_column_of = [](const ir::TileType& column, const ir::TileType& matrix) {
      return column.shape()[1] == 1 && matrix.shape()[1] != 1 && column.shape()[0] == matrix.shape()[0];
    };
    const std::string expanded = "pl.row_expand_" + form.substr(3);
    if (is_column_of(*rhs, *lhs)) return expanded;
    if (!is_column_of(*lhs, *rhs)) return std::nullopt;
    if (form == "pl.sub" || form == "pl.div")
      return MakeError(DiagnosticKind::Type,
                       fmt::format("{}: a [{}, 1] column on the left of a [{}, {}] tile has no row-broadcast form",
                                   form, lhs->shape()[0], rhs->shape()[0], rhs->shape()[1]),
                       span, "broadcast the column to the tile's shape first, with pl.row_expand(tile, column)");
    std::swap(positional[0], positional[1]);
    return expanded;
  }

  // Inside a kernel, a unified op given a whole tensor works on it as a tile: `pl.add(x, x)` loads
  // x first, as upstream's tensor-to-tile conversion does (the tensor must fit the buffer).
  static bool IsUnifiedCompute(const std::string& name) {
    static const std::set<std::string, std::less<>> kNotCompute = {
        "pl.load", "pl.store", "pl.create_tile", "pl.create_tensor", "pl.full", "pl.move", "pl.reshape", "pl.read",
        "pl.write", "pl.mscatter", "pl.mgather"};
    return name.starts_with("pl.") && !name.starts_with("pl.tile.") && !name.starts_with("pl.tensor.") &&
           !name.starts_with("pl.system.") && !name.starts_with("pl.prefetch.") && !name.starts_with("pl.comm.") &&
           !kNotCompute.contains(name);
  }

  ir::Result<ir::ExprPtr> LoadWhole(const ir::ExprPtr& tensor, const ir::Span& span) {
    std::vector<ir::ExprPtr> offsets, shape;
    for (int64_t dim : tensor->type()->As<ir::TensorType>()->shape()) {
      offsets.push_back(std::make_shared<ir::ConstInt>(0, ir::DataType::INDEX, span));
      shape.push_back(std::make_shared<ir::ConstInt>(dim, ir::DataType::INDEX, span));
    }
    auto call = ir::OpRegistry::Get().CreateCall("tile.load", {tensor, Tuple(offsets, span), Tuple(shape, span)}, {},
                                                 span);
    if (!call) return pypto::unexpected(call.error());
    return ir::ExprPtr(*call);
  }

  // pl.add / pl.mul / pl.max ... on two scalars is scalar arithmetic, as the infix operators are.
  std::optional<ir::Result<ir::ExprPtr>> ScalarCall(const std::string& name, const std::vector<ir::ExprPtr>& operands,
                                                    size_t positional, size_t keywords, const ir::Span& span) {
    auto op = ScalarArithmetic(name);
    if (!op || keywords > 0 || positional != 2 || operands.size() != 2) return std::nullopt;
    if (!operands[0]->type()->As<ir::ScalarType>() || !operands[1]->type()->As<ir::ScalarType>()) return std::nullopt;
    return ir::MakeBinary(*op, operands[0], operands[1], span);
  }

  // A dtype (pl.FP32), a memory space (pl.Mem.Vec / pl.MemorySpace.Vec), a mask pattern
  // (pl.tile.MaskPattern.P0101, an integer attribute) or a string literal is an attribute; anything
  // else an expression.
  // ---- kernel-driven gathers into L1 --------------------------------------------------------------

  // The positional and keyword arguments of a call, by parameter name, each given at most once.
  ir::Result<std::map<std::string, py::handle>> BindArguments(py::handle node, const std::vector<std::string>& names,
                                                               size_t required, const std::string& op) {
    std::map<std::string, py::handle> bound;
    py::list args = node.attr("args");
    if (args.size() > names.size())
      return MakeError(DiagnosticKind::Type, fmt::format("{} takes at most {} arguments", op, names.size()),
                       map_.SpanOf(node));
    for (size_t i = 0; i < args.size(); ++i) bound[names[i]] = args[i];
    for (auto keyword : node.attr("keywords")) {
      const auto arg = keyword.attr("arg");
      const std::string key = arg.is_none() ? "**" : arg.cast<std::string>();
      if (std::find(names.begin(), names.end(), key) == names.end() || bound.contains(key))
        return MakeError(DiagnosticKind::Type, fmt::format("{} got an unexpected or repeated argument '{}'", op, key),
                         map_.SpanOf(keyword));
      bound[key] = keyword.attr("value");
    }
    for (size_t i = 0; i < required; ++i)
      if (!bound.contains(names[i]))
        return MakeError(DiagnosticKind::Type, fmt::format("{} needs its '{}' argument", op, names[i]),
                         map_.SpanOf(node));
    return bound;
  }

  // `pl.create_l1(shape, dtype)`: an on-chip Mat tile a kernel fills row by row (pl.gather_row) and
  // multiplies, with no trip through global memory.
  ir::Result<ir::ExprPtr> ParseCreateL1(py::handle node) {
    const ir::Span span = map_.SpanOf(node);
    if (kernel_depth_ == 0)
      return MakeError(DiagnosticKind::Syntax, "pl.create_l1 makes an on-chip tile; call it inside a pl.at scope", span);
    auto bound = BindArguments(node, {"shape", "dtype", "transpose"}, 2, "pl.create_l1");
    if (!bound) return pypto::unexpected(bound.error());
    if (bound->contains("transpose"))
      return MakeError(DiagnosticKind::InvalidOperation, "pl.create_l1(..., transpose=True) is not supported yet",
                       map_.SpanOf(bound->at("transpose")), "gather the rows untransposed and multiply with b_trans=True");
    auto shape = ParseExpr(bound->at("shape"));
    if (!shape) return shape;
    auto dtype = ParseArgValue(bound->at("dtype"));
    if (!dtype) return pypto::unexpected(dtype.error());
    const auto* attr = std::get_if<ir::OpAttr>(&*dtype);
    if (!attr || !std::holds_alternative<ir::DataType>(*attr))
      return MakeError(DiagnosticKind::Type, "the dtype of pl.create_l1 is a pl dtype such as pl.BF16",
                       map_.SpanOf(bound->at("dtype")));
    auto call = ir::OpRegistry::Get().CreateCall("tile.create", {*shape},
                                                 {{"dtype", *attr}, {"target_memory", ir::OpAttr(ir::MemorySpace::Mat)}},
                                                 span);
    if (!call) return pypto::unexpected(call.error());
    return ir::ExprPtr(*call);
  }

  // `acc = pl.gather_row(acc, src, [r, c], [sr, sc], [1, n])`: the window of `src` at [sr, sc] loaded
  // into Mat and written into `acc` at [r, c] (a load, then a tile.assemble in place).
  ir::Result<ir::ExprPtr> ParseGatherRow(py::handle node) {
    const ir::Span span = map_.SpanOf(node);
    auto bound = BindArguments(node, {"acc", "src", "dst_offset", "src_offset", "shapes", "transpose", "valid_shape"},
                               5, "pl.gather_row");
    if (!bound) return pypto::unexpected(bound.error());
    if (bound->contains("transpose") && !IsFalse(bound->at("transpose")))
      return MakeError(DiagnosticKind::InvalidOperation, "pl.gather_row(..., transpose=True) is not supported yet",
                       map_.SpanOf(bound->at("transpose")), "gather the rows untransposed and multiply with b_trans=True");
    std::vector<ir::ExprPtr> parsed;
    for (const char* key : {"acc", "src", "dst_offset", "src_offset", "shapes"}) {
      auto expr = ParseExpr(bound->at(key));
      if (!expr) return expr;
      parsed.push_back(*expr);
    }
    std::vector<ir::ExprPtr> load_args = {parsed[1], parsed[3], parsed[4]};
    if (bound->contains("valid_shape")) {
      auto valid = ParseExpr(bound->at("valid_shape"));
      if (!valid) return valid;
      load_args.push_back(*valid);
    }
    auto row = ir::OpRegistry::Get().CreateCall("tile.load", std::move(load_args),
                                                {{"target_memory", ir::OpAttr(ir::MemorySpace::Mat)}}, span);
    if (!row) return pypto::unexpected(row.error());
    auto written = ir::OpRegistry::Get().CreateCall("tile.assemble", {parsed[0], *row, parsed[2]}, {}, span);
    if (!written) return pypto::unexpected(written.error());
    return ir::ExprPtr(*written);
  }

  // `out = pl.expand_clone(x, y)` in a kernel: y filled with copies of x along the one dimension
  // where x has extent 1 (in every other dimension the two agree). x is loaded whole and stored once
  // per index of that dimension: a loop over all but the last index, then the store at the last one,
  // which is the value (the stores update y in place).
  ir::Result<ir::ExprPtr> ParseExpandClone(py::handle node) {
    const ir::Span span = map_.SpanOf(node);
    if (kernel_depth_ == 0)
      return MakeError(DiagnosticKind::InvalidOperation,
                       "pl.expand_clone outside a kernel (a tensor-to-tensor copy in orchestration) is not supported "
                       "yet",
                       span, "call it inside the pl.at scope or InCore function that writes the target");
    auto bound = BindArguments(node, {"input", "target"}, 2, "pl.expand_clone");
    if (!bound) return pypto::unexpected(bound.error());
    auto input = ParseExpr(bound->at("input"));
    if (!input) return input;
    auto target = ParseExpr(bound->at("target"));
    if (!target) return target;
    auto dim = ExpandedDim(**input, **target, span);
    if (!dim) return pypto::unexpected(dim.error());
    auto tile = LoadWhole(*input, span);
    if (!tile) return tile;
    const size_t rank = (*tile)->type()->As<ir::TileType>()->shape().size();
    auto zero = [&] { return std::make_shared<ir::ConstInt>(0, ir::DataType::INDEX, span); };
    std::vector<ir::ExprPtr> offsets(rank);
    for (auto& offset : offsets) offset = zero();
    if (!*dim) {  // same shape: one copy
      auto store = ir::OpRegistry::Get().CreateCall("tile.store", {*tile, Tuple(offsets, span), *target}, {}, span);
      if (!store) return pypto::unexpected(store.error());
      return ir::ExprPtr(*store);
    }
    auto source = std::make_shared<ir::Var>("expand_clone_src", (*tile)->type(), span);
    prelude_.push_back(std::make_shared<ir::AssignStmt>(source, *tile, span));
    auto store_at = [&](const ir::ExprPtr& index) {
      offsets[**dim] = index;
      return ir::OpRegistry::Get().CreateCall("tile.store", {source, Tuple(offsets, span), *target}, {}, span);
    };
    const int64_t last = (*target)->type()->As<ir::TensorType>()->shape()[**dim] - 1;
    auto index = std::make_shared<ir::Var>("expand_clone_i", std::make_shared<ir::ScalarType>(ir::DataType::INDEX),
                                           span);
    auto store = store_at(index);
    if (!store) return pypto::unexpected(store.error());
    auto stored = std::make_shared<ir::Var>("expand_clone_dst", (*store)->type(), span);
    prelude_.push_back(std::make_shared<ir::ForStmt>(
        index, zero(), std::make_shared<ir::ConstInt>(last, ir::DataType::INDEX, span),
        std::make_shared<ir::ConstInt>(1, ir::DataType::INDEX, span),
        Seq({std::make_shared<ir::AssignStmt>(stored, *store, span)}, span), ir::ForKind::Sequential, span));
    auto final_store = store_at(std::make_shared<ir::ConstInt>(last, ir::DataType::INDEX, span));
    if (!final_store) return pypto::unexpected(final_store.error());
    return ir::ExprPtr(*final_store);
  }

  // The dimension pl.expand_clone copies along (nullopt: the shapes agree): the only one where the
  // input has extent 1 and the target more.
  static ir::Result<std::optional<size_t>> ExpandedDim(const ir::Expr& input, const ir::Expr& target,
                                                       const ir::Span& span) {
    const auto* from = input.type()->As<ir::TensorType>();
    const auto* to = target.type()->As<ir::TensorType>();
    if (!from || !to)
      return MakeError(DiagnosticKind::Type,
                       fmt::format("pl.expand_clone copies a tensor into a tensor, got {} and {}", input.type()->str(),
                                   target.type()->str()),
                       span);
    if (from->dtype() != to->dtype() || from->shape().size() != to->shape().size())
      return MakeError(DiagnosticKind::Type,
                       fmt::format("pl.expand_clone needs an input of the target's dtype and rank, got {} and {}",
                                   from->str(), to->str()),
                       span);
    std::optional<size_t> dim;
    for (size_t i = 0; i < from->shape().size(); ++i) {
      if (from->shape()[i] == to->shape()[i]) continue;
      if (from->shape()[i] != 1)
        return MakeError(DiagnosticKind::Type,
                         fmt::format("pl.expand_clone: dimension {} of the input is {}, neither 1 nor the target's {}",
                                     i, from->shape()[i], to->shape()[i]),
                         span);
      if (dim)
        return MakeError(DiagnosticKind::InvalidOperation,
                         fmt::format("pl.expand_clone copies along one dimension, but the input {} has extent 1 in "
                                     "dimensions {} and {} of the target {}",
                                     from->str(), *dim, i, to->str()),
                         span);
      dim = i;
    }
    return dim;
  }

  // A bare name that is not a variable of the kernel and stands for None.
  bool NamesNone(py::handle node) const {
    if (!IsNode(node, "Name")) return false;
    const std::string name = node.attr("id").cast<std::string>();
    if (env_.contains(name)) return false;
    auto constant = source_.constants->find(name);
    return constant != source_.constants->end() && std::holds_alternative<NoneValue>(constant->second);
  }

  static bool IsFalse(py::handle node) {
    return IsNode(node, "Constant") && py::isinstance<py::bool_>(node.attr("value")) && !node.attr("value").cast<bool>();
  }

  // `pld.tensor.put(dst, peer, src[, dst_offsets, src_offsets, shape], atomic=...)` and
  // `pld.tensor.get(dst, peer, src, ...)`: a copy between windows through a Vec staging tile. put
  // loads the local src region and stores it into the peer's dst region (comm.remote_store, adding
  // into it with atomic=pld.AtomicType.Add); get reads the peer's src region (comm.remote_load) and
  // stores it into the local dst region. Without offsets and shape the whole tensors are copied.
  // chunk_rows / chunk_cols / pipeline only shape the device's staging, so they are not kept.
  ir::Result<ir::ExprPtr> ParsePutGet(py::handle node, bool put) {
    const ir::Span span = map_.SpanOf(node);
    const std::string op = put ? "pld.tensor.put" : "pld.tensor.get";
    static const std::vector<std::string> kNames = {"dst", "peer", "src", "dst_offsets", "src_offsets", "shape"};
    std::map<std::string, py::handle> given;
    py::list args = node.attr("args");
    if (py::len(args) > kNames.size())
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("'{}' takes at most {} arguments, got {}", op, kNames.size(), py::len(args)), span);
    for (size_t i = 0; i < py::len(args); ++i) given[kNames[i]] = args[i];
    std::optional<py::handle> atomic;
    for (auto keyword : node.attr("keywords")) {
      if (keyword.attr("arg").is_none())
        return MakeError(DiagnosticKind::Syntax, "**kwargs are not supported in op calls", map_.SpanOf(keyword));
      const auto key = keyword.attr("arg").cast<std::string>();
      if (key == "atomic") {
        atomic = keyword.attr("value");
      } else if (key == "chunk_rows" || key == "chunk_cols" || key == "pipeline") {
        continue;
      } else if (std::find(kNames.begin(), kNames.end(), key) == kNames.end()) {
        return MakeError(DiagnosticKind::InvalidOperation,
                         fmt::format("'{}' has no argument '{}' (arguments: {}, atomic)", op, key, fmt::join(kNames, ", ")),
                         map_.SpanOf(keyword));
      } else if (!given.emplace(key, keyword.attr("value")).second) {
        return MakeError(DiagnosticKind::InvalidOperation, fmt::format("'{}' got argument '{}' twice", op, key),
                         map_.SpanOf(keyword));
      }
    }
    std::map<std::string, ir::ExprPtr> values;
    for (const auto& [key, arg] : given) {
      auto value = ParseExpr(arg);
      if (!value) return pypto::unexpected(value.error());
      values[key] = *value;
    }
    for (const char* key : {"dst", "peer", "src"})
      if (!values.contains(key))
        return MakeError(DiagnosticKind::InvalidOperation, fmt::format("'{}' is missing argument '{}'", op, key), span);
    const auto* dst = values["dst"]->type()->As<ir::TensorType>();
    const auto* src = values["src"]->type()->As<ir::TensorType>();
    if (!dst || !src)
      return MakeError(DiagnosticKind::Type, fmt::format("'{}' copies between tensors: dst and src must be tensors", op),
                       span);
    const size_t region_args = values.count("dst_offsets") + values.count("src_offsets") + values.count("shape");
    if (region_args != 0 && region_args != 3)
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("'{}' takes dst_offsets, src_offsets and shape together, or none of them", op), span);
    if (region_args == 0) {
      if (dst->shape() != src->shape())
        return MakeError(DiagnosticKind::Type,
                         fmt::format("'{}' of the whole tensors needs one shape, but dst is {} and src {}", op,
                                     dst->str(), src->str()),
                         span, "give dst_offsets, src_offsets and shape to copy a region");
      std::vector<ir::ExprPtr> zeros, extents;
      for (int64_t dim : src->shape()) {
        zeros.push_back(std::make_shared<ir::ConstInt>(0, ir::DataType::INDEX, span));
        extents.push_back(std::make_shared<ir::ConstInt>(dim, ir::DataType::INDEX, span));
      }
      values["dst_offsets"] = values["src_offsets"] = Tuple(zeros, span);
      values["shape"] = Tuple(extents, span);
    }
    ir::Call::Kwargs store_kwargs;
    if (atomic) {
      auto mode = AtomicKeyword(op, *atomic);
      if (!mode) return pypto::unexpected(mode.error());
      if (*mode && !put)
        return MakeError(DiagnosticKind::InvalidOperation, "pld.tensor.get has no atomic form; get then add locally",
                         map_.SpanOf(*atomic));
      if (*mode) store_kwargs.emplace_back("atomic", ir::OpAttr(std::string("add")));
    }
    const auto& registry = ir::OpRegistry::Get();
    auto staged = put ? registry.CreateCall("tile.load", {values["src"], values["src_offsets"], values["shape"]}, {}, span)
                      : registry.CreateCall("comm.remote_load",
                                            {values["src"], values["peer"], values["src_offsets"], values["shape"]}, {},
                                            span);
    if (!staged) return WithOpName(op, staged.error());
    auto stored = put ? registry.CreateCall("comm.remote_store",
                                            {*staged, values["dst"], values["peer"], values["dst_offsets"]},
                                            std::move(store_kwargs), span)
                      : registry.CreateCall("tile.store", {*staged, values["dst_offsets"], values["dst"]}, {}, span);
    if (!stored) return WithOpName(op, stored.error());
    return ir::ExprPtr(*stored);
  }

  static pypto::unexpected<ir::Diagnostic> WithOpName(const std::string& op, ir::Diagnostic error) {
    error.message = fmt::format("{}: {}", op, error.message);
    return pypto::unexpected(std::move(error));
  }

  // `ctx = pld.get_comm_ctx(window)`: the window tensor itself stands for its communication context
  // (the comm ops read the domain off the window they are given).
  ir::Result<ir::ExprPtr> ParseCommCtx(py::handle node) {
    return ParseSoleTensorArgument(node, "pld.get_comm_ctx takes one window tensor",
                                   "pld.get_comm_ctx takes a window tensor (a pld.DistributedTensor parameter)");
  }

  ir::Result<ArgValue> ParseArgValue(py::handle node) {
    const std::string dotted = DottedName(node);
    if (auto member = CommEnumMember(dotted); member && !env_.contains(dotted)) return ArgValue(ir::OpAttr(*member));
    if (IsNode(node, "Name") && !env_.contains(dotted)) {
      if (auto dtype = DtypeOf(node, source_.constants)) return ArgValue(ir::OpAttr(*dtype));
      // A string constant (`acc_phase=phase`) is the attribute its literal would be.
      if (auto constant = source_.constants->find(dotted); constant != source_.constants->end())
        if (const auto* text = std::get_if<std::string>(&constant->second)) return ArgValue(ir::OpAttr(*text));
    }
    if (dotted.starts_with("pl.") && !env_.contains(dotted)) {
      if (auto dtype = ir::DataTypeFromName(std::string_view(dotted).substr(3))) return ArgValue(ir::OpAttr(*dtype));
      if (dotted.starts_with("pl.tile.MaskPattern.")) {
        auto pattern = ir::MaskPatternFromName(std::string_view(dotted).substr(20));
        if (pattern) return ArgValue(ir::OpAttr(*pattern));
        return MakeError(DiagnosticKind::Type, fmt::format("'{}' is not a mask pattern", dotted), map_.SpanOf(node),
                         "mask patterns: P0101, P1010, P0001, P0010, P0100, P1000, P1111");
      }
      for (std::string_view prefix : {"pl.Mem.", "pl.MemorySpace."}) {
        if (!dotted.starts_with(prefix)) continue;
        if (auto space = ir::MemorySpaceFromName(std::string_view(dotted).substr(prefix.size())))
          return ArgValue(ir::OpAttr(*space));
        return MakeError(DiagnosticKind::Type, fmt::format("'{}' is not a memory space", dotted), map_.SpanOf(node),
                         "memory spaces: Vec, Mat, Left, Right, Acc, Bias");
      }
    }
    if (dotted.starts_with("pl.PadValue.") && !env_.contains(dotted)) return PadValueAttr(dotted, node);
    if (dotted.starts_with("pl.PipeType.") && !env_.contains(dotted)) return PipeTypeAttr(dotted, node);
    if (IsNode(node, "Constant") && py::isinstance<py::str>(node.attr("value")))
      return ArgValue(ir::OpAttr(node.attr("value").cast<std::string>()));
    auto expr = ParseExpr(node);
    if (!expr) return pypto::unexpected(expr.error());
    return ArgValue(*expr);
  }


  // pl.PadValue.zero / min / max: fillpad's padding mode, a string attribute ("min").
  ir::Result<ArgValue> PadValueAttr(const std::string& dotted, py::handle node) {
    const std::string mode = dotted.substr(std::string_view("pl.PadValue.").size());
    if (mode == "zero" || mode == "min" || mode == "max") return ArgValue(ir::OpAttr(mode));
    return MakeError(DiagnosticKind::Type, fmt::format("'{}' is not a padding mode", dotted), map_.SpanOf(node),
                     "pad values: pl.PadValue.zero, pl.PadValue.min, pl.PadValue.max");
  }

  // pl.PipeType.MTE3: a pipe of the core (the sync ops' pipe=), a string attribute ("MTE3").
  ir::Result<ArgValue> PipeTypeAttr(const std::string& dotted, py::handle node) {
    static const std::set<std::string, std::less<>> kPipes = {"MTE1", "MTE2", "MTE3", "M", "V", "S", "FIX", "ALL"};
    const std::string pipe = dotted.substr(std::string_view("pl.PipeType.").size());
    if (kPipes.contains(pipe)) return ArgValue(ir::OpAttr(pipe));
    return MakeError(DiagnosticKind::Type, fmt::format("'{}' is not a pipe", dotted), map_.SpanOf(node),
                     "pipes: pl.PipeType.MTE1, MTE2, MTE3, M, V, S, FIX, ALL");
  }

  // `pl.row_sum(x)` without a scratch tile gets a fresh one (hoisted before the call by FlattenCallExpr).
  static ir::Result<bool> BindDefaultScratch(const std::string& name, const ir::OpDef& op, const ir::ExprPtr& operand,
                                             CallBuilder& call, const ir::Span& span) {
    auto param = std::find_if(op.params.begin(), op.params.end(),
                              [](const ir::OpParam& p) { return p.name == "tmp_tile"; });
    if (param == op.params.end() || call.Has(*param)) return true;
    auto scratch = DefaultScratchTile(name, op, operand, span);
    if (!scratch) return pypto::unexpected(scratch.error());
    if (!*scratch) return true;
    return call.Bind(*param, *scratch, span);
  }

  // `pl.rsqrt(x, high_precision=True)`: the unified op's precision switch, removed from the keywords.
  // The precise form is the tile op given a scratch tile (what upstream lowers it to).
  ir::Result<bool> TakeHighPrecision(const std::string& name,
                                     std::vector<std::tuple<std::string, ArgValue, py::handle>>& keywords) {
    auto it = std::find_if(keywords.begin(), keywords.end(),
                           [](const auto& keyword) { return std::get<0>(keyword) == "high_precision"; });
    if (it == keywords.end() || name != "pl.rsqrt") return false;
    const auto* expr = std::get_if<ir::ExprPtr>(&std::get<1>(*it));
    const auto* flag = expr ? (*expr)->As<ir::ConstBool>() : nullptr;
    if (!flag)
      return MakeError(DiagnosticKind::Type, "pl.rsqrt high_precision= must be True or False",
                       map_.SpanOf(std::get<2>(*it)));
    const bool value = flag->value();
    keywords.erase(it);
    return value;
  }

  // (Also the scratch tile of pl.tensor.xor / xors in a kernel.)
  static ir::Result<bool> BindPrecisionScratch(const ir::OpDef& op, const ir::ExprPtr& operand, CallBuilder& call,
                                               const ir::Span& span) {
    auto param = std::find_if(op.params.begin(), op.params.end(), [](const ir::OpParam& p) { return p.name == "tmp"; });
    const auto* tile = operand->type()->As<ir::TileType>();
    if (param == op.params.end() || call.Has(*param) || !tile) return true;
    auto scratch = CreateTileLike(*tile, span);
    if (!scratch) return pypto::unexpected(scratch.error());
    return call.Bind(*param, *scratch, span);
  }

  // The positional arguments of a call to function `name`, into args[0], args[1], ...
  ir::Result<bool> ParsePositionalArgs(const std::string& name, py::handle node, std::vector<ir::ExprPtr>& args,
                                       const ir::Span& span) {
    size_t position = 0;
    for (auto arg : node.attr("args")) {
      if (position >= args.size())
        return MakeError(DiagnosticKind::Type,
                         fmt::format("{}() takes {} arguments, got {}", name, args.size(), py::len(node.attr("args"))),
                         span);
      auto expr = ParseExpr(arg);
      if (!expr) return pypto::unexpected(expr.error());
      args[position++] = *expr;
    }
    return true;
  }

  // A keyword argument of a call to function `name`, into args[index] (which must still be empty).
  ir::Result<bool> ParseKeywordArg(const std::string& name, py::handle keyword, size_t index,
                                   std::vector<ir::ExprPtr>& args) {
    auto expr = ParseExpr(keyword.attr("value"));
    if (!expr) return pypto::unexpected(expr.error());
    if (args[index])
      return MakeError(DiagnosticKind::Type,
                       fmt::format("{}() got parameter '{}' twice", name, keyword.attr("arg").cast<std::string>()),
                       map_.SpanOf(keyword));
    args[index] = *expr;
    return true;
  }

  // A call of a @pl.jit.incore or .inline function: its definition, parsed from its own source, and
  // the call's arguments in its parameter order (every parameter given, by position or keyword). The
  // source's tensor specs are the argument tensors' shapes and dtypes.
  struct SubFunctionCall {
    FunctionSource source;
    std::vector<std::string> param_names;
    std::vector<ir::ExprPtr> args;
  };

  ir::Result<SubFunctionCall> ParseSubFunctionCall(const std::string& name, py::handle node) {
    const ir::Span span = map_.SpanOf(node);
    const SubFunction& sub = program_.request->functions.at(name);
    SourceMap map{sub.filename, sub.line_offset, sub.column_offset};
    auto def = ParseDef(sub.source, map);
    if (!def) return pypto::unexpected(def.error());
    SubFunctionCall call{.source = FunctionSource{.name = name, .def = *def, .map = map, .constants = &sub.constants}};
    for (auto arg : def->attr("args").attr("args")) call.param_names.push_back(arg.attr("arg").cast<std::string>());
    const auto& names = call.param_names;
    call.args.resize(names.size());
    if (auto ok = ParsePositionalArgs(name, node, call.args, span); !ok) return pypto::unexpected(ok.error());
    for (auto keyword : node.attr("keywords")) {
      std::string key = keyword.attr("arg").is_none() ? "**" : keyword.attr("arg").cast<std::string>();
      auto it = std::find(names.begin(), names.end(), key);
      if (it == names.end())
        return MakeError(DiagnosticKind::Type, fmt::format("{}() has no parameter '{}'", name, key),
                         map_.SpanOf(keyword));
      if (auto ok = ParseKeywordArg(name, keyword, static_cast<size_t>(it - names.begin()), call.args); !ok)
        return pypto::unexpected(ok.error());
    }
    for (size_t i = 0; i < call.args.size(); ++i) {
      if (!call.args[i])
        return MakeError(DiagnosticKind::Type, fmt::format("{}() is missing parameter '{}'", name, names[i]), span);
      if (const auto* tensor = call.args[i]->type()->As<ir::TensorType>())
        call.source.tensor_specs[names[i]] = TensorSpec{tensor->shape(), tensor->dtype()};
    }
    return call;
  }

  // `out = kernel(a, b, out)`: a call to a @pl.jit.incore function, specialised on the argument types.
  ir::Result<ir::ExprPtr> ParseKernelCall(const std::string& name, py::handle node) {
    const ir::Span span = map_.SpanOf(node);
    const SubFunction& sub = program_.request->functions.at(name);
    if (kernel_depth_ > 0)
      return MakeError(DiagnosticKind::Syntax, fmt::format("kernel '{}' is called inside a kernel", name), span,
                       "call kernels from the @pl.jit function, outside pl.at scopes");
    if (sub.form != "incore" && sub.form != "extern")
      return MakeError(DiagnosticKind::Syntax, fmt::format("calls to @pl.jit.{} functions are not supported yet", sub.form),
                       span);
    auto call = ParseSubFunctionCall(name, node);
    if (!call) return pypto::unexpected(call.error());
    call->source.type = ir::FunctionType::InCore;
    std::vector<ir::ExprPtr>& args = call->args;
    std::vector<std::string> key_parts;
    for (const auto& arg : args) key_parts.push_back(arg->type()->str());
    const std::string types = fmt::format("{}", fmt::join(key_parts, ", "));
    auto kernel = sub.form == "extern" ? SpecialiseExtern(name, sub, call->source, types, span)
                                       : Specialise(call->source, fmt::format("{}({})", name, types), span);
    if (!kernel) return pypto::unexpected(kernel.error());
    if (auto ok = CheckKernelArgs(**kernel, args, call->param_names, span); !ok) return pypto::unexpected(ok.error());
    const auto& returns = (*kernel)->return_types();
    ir::TypePtr type = returns.size() == 1 ? returns[0]
                       : returns.empty()   ? ir::TypePtr(std::make_shared<ir::UnknownType>())
                                           : ir::TypePtr(std::make_shared<ir::TupleType>(returns));
    return ir::ExprPtr(std::make_shared<ir::Call>((*kernel)->name(), std::move(args), type, span));
  }

  // `self.f(a, b[, attrs={"arg_directions": [...]}])`: a call to another function of the @pl.program.
  ir::Result<ir::ExprPtr> ParseMethodCall(const std::string& name, py::handle node) {
    const ir::Span span = map_.SpanOf(node);
    auto found = program_.methods->find(name);
    if (found == program_.methods->end()) {
      std::vector<std::string> names;
      for (const auto& [known, _] : *program_.methods) names.push_back(known);
      return MakeError(DiagnosticKind::UndefinedName,
                       fmt::format("program '{}' has no function '{}'", program_.program_name, name), span,
                       fmt::format("its functions: {}", fmt::join(names, ", ")));
    }
    const Signature& callee = found->second;
    if (kernel_depth_ > 0)
      return MakeError(DiagnosticKind::Syntax, fmt::format("function '{}' is called inside a kernel", name), span,
                       "call functions from an Opaque or Orchestration function, outside pl.at scopes");
    std::vector<ir::ExprPtr> args(callee.params.size());
    std::vector<ir::ArgDirection> directions;
    bool has_directions = false;
    if (auto ok = ParsePositionalArgs(name, node, args, span); !ok) return pypto::unexpected(ok.error());
    for (auto keyword : node.attr("keywords")) {
      std::string key = keyword.attr("arg").is_none() ? "**" : keyword.attr("arg").cast<std::string>();
      if (key == "attrs") {
        auto parsed = ParseCallAttrs(keyword.attr("value"));
        if (!parsed) return pypto::unexpected(parsed.error());
        directions = std::move(*parsed);
        has_directions = true;
        continue;
      }
      auto it = std::find_if(callee.params.begin(), callee.params.end(),
                             [&](const ir::VarPtr& p) { return p->name_hint() == key; });
      if (it == callee.params.end())
        return MakeError(DiagnosticKind::Type, fmt::format("{}() has no parameter '{}'", name, key),
                         map_.SpanOf(keyword));
      auto ok = ParseKeywordArg(name, keyword, static_cast<size_t>(it - callee.params.begin()), args);
      if (!ok) return pypto::unexpected(ok.error());
    }
    for (size_t i = 0; i < args.size(); ++i) {
      if (!args[i])
        return MakeError(DiagnosticKind::Type,
                         fmt::format("{}() is missing parameter '{}'", name, callee.params[i]->name_hint()), span);
      // A generic function's parameters are untyped until the call specialises it, on the views.
      if (!callee.generic() && !callee.params[i]->type()->As<ir::TensorType>()) continue;
      auto arg = SliceAsView(args[i]);
      if (!arg) return pypto::unexpected(arg.error());
      args[i] = *arg;
    }
    const Signature* target = &callee;
    std::vector<ir::TypePtr> returns = callee.return_types;
    if (callee.generic()) {
      auto specialised = SpecialiseMethod(program_, callee, SpecsOf(callee, args), &span);
      if (!specialised) return pypto::unexpected(specialised.error());
      target = &(*specialised)->signature;
      returns = (*specialised)->function->return_types();
    }
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string& param = target->params[i]->name_hint();
      const auto& expected = target->params[i]->type();
      const auto& actual = args[i]->type();
      const bool ok = expected->As<ir::ScalarType>() ? actual->As<ir::ScalarType>() != nullptr
                                                     : Assignable(expected, actual);
      if (!ok)
        return MakeError(DiagnosticKind::Type,
                         fmt::format("{}() parameter '{}' expects {}, got {}", name, param, expected->str(),
                                     actual->str()),
                         span);
    }
    if (has_directions && directions.size() != args.size())
      return MakeError(DiagnosticKind::Type,
                       fmt::format("{}() takes {} arguments but has {} arg_directions", name, args.size(),
                                   directions.size()),
                       span);
    ir::TypePtr type = returns.size() == 1 ? returns[0]
                       : returns.empty()   ? ir::TypePtr(std::make_shared<ir::UnknownType>())
                                           : ir::TypePtr(std::make_shared<ir::TupleType>(returns));
    return ir::ExprPtr(std::make_shared<ir::Call>(target->name, std::move(args), type, span, std::move(directions)));
  }

  // The tensors a call passes to a generic method, by parameter name.
  static std::map<std::string, TensorSpec> SpecsOf(const Signature& callee, const std::vector<ir::ExprPtr>& args) {
    std::map<std::string, TensorSpec> specs;
    for (size_t i = 0; i < args.size(); ++i)
      if (const auto* tensor = args[i]->type()->As<ir::TensorType>())
        specs[callee.params[i]->name_hint()] = TensorSpec{tensor->shape(), tensor->dtype()};
    return specs;
  }

  // `attrs={"arg_directions": ["Input", "OutputExisting", ...]}` (or pl.adir.input, ...): how each
  // argument is passed, as DeriveCallDirections writes it.
  ir::Result<std::vector<ir::ArgDirection>> ParseCallAttrs(py::handle node) {
    if (!IsNode(node, "Dict"))
      return MakeError(DiagnosticKind::Syntax, "attrs= takes a dict literal, e.g. attrs={\"arg_directions\": [...]}",
                       map_.SpanOf(node));
    std::vector<ir::ArgDirection> directions;
    py::list keys = node.attr("keys"), values = node.attr("values");
    for (size_t i = 0; i < py::len(keys); ++i) {
      py::handle key = keys[i];
      if (!IsNode(key, "Constant") || !py::isinstance<py::str>(key.attr("value")) ||
          key.attr("value").cast<std::string>() != "arg_directions")
        return MakeError(DiagnosticKind::Syntax, "the only call attribute is \"arg_directions\"",
                         map_.SpanOf(key.is_none() ? py::handle(values[i]) : key));
      py::handle list = values[i];
      if (!IsNode(list, "List") && !IsNode(list, "Tuple"))
        return MakeError(DiagnosticKind::Syntax, "arg_directions takes a list, one direction per argument",
                         map_.SpanOf(list));
      for (auto element : list.attr("elts")) {
        auto direction = ArgDirectionOf(element);
        if (!direction)
          return MakeError(DiagnosticKind::Type, "unknown argument direction", map_.SpanOf(element),
                           "directions: \"Input\", \"Output\", \"InOut\", \"OutputExisting\", \"NoDep\", \"Scalar\"");
        directions.push_back(*direction);
      }
    }
    return directions;
  }

  static std::optional<ir::ArgDirection> ArgDirectionOf(py::handle node) {
    static const std::map<std::string, ir::ArgDirection> kAdir = {
        {"pl.adir.input", ir::ArgDirection::Input},
        {"pl.adir.output", ir::ArgDirection::Output},
        {"pl.adir.inout", ir::ArgDirection::InOut},
        {"pl.adir.output_existing", ir::ArgDirection::OutputExisting},
        {"pl.adir.no_dep", ir::ArgDirection::NoDep},
        {"pl.adir.scalar", ir::ArgDirection::Scalar}};
    if (auto it = kAdir.find(DottedName(node)); it != kAdir.end()) return it->second;
    if (!IsNode(node, "Constant") || !py::isinstance<py::str>(node.attr("value"))) return std::nullopt;
    const std::string text = node.attr("value").cast<std::string>();
    for (auto direction : {ir::ArgDirection::Input, ir::ArgDirection::Output, ir::ArgDirection::InOut,
                           ir::ArgDirection::OutputExisting, ir::ArgDirection::NoDep, ir::ArgDirection::Scalar})
      if (text == ir::ArgDirectionName(direction)) return direction;
    return std::nullopt;
  }

  // The kernel for one argument signature, parsed once; a second signature gets a suffixed name.
  ir::Result<ir::FunctionPtr> Specialise(FunctionSource source, const std::string& key, const ir::Span& span) {
    if (auto it = program_.specialisations.find(key); it != program_.specialisations.end()) return it->second;
    const std::string name = source.name;
    if (program_.parsing.contains(name))
      return MakeError(DiagnosticKind::Syntax, fmt::format("kernel '{}' calls itself", name), span);
    for (int n = 1; program_.names.contains(source.name); ++n) source.name = fmt::format("{}_{}", name, n);
    program_.names.insert(source.name);
    program_.parsing.insert(name);
    auto kernel = FunctionParser(program_, source).Parse();
    program_.parsing.erase(name);
    if (!kernel) return kernel;
    program_.specialisations[key] = *kernel;
    program_.kernels.push_back(*kernel);
    return kernel;
  }

  void WarnOnMisboundResult(const ir::Expr& value, const std::string& target, const ir::Span& span) {
    const auto* call = value.As<ir::Call>();
    if (!call || call->is_op_call()) return;
    auto callee = std::find_if(program_.kernels.begin(), program_.kernels.end(),
                               [&](const ir::FunctionPtr& f) { return f->name() == call->callee(); });
    if (callee == program_.kernels.end()) return;
    if (auto warning = ResultBindingWarning(**callee, *call, target))
      if (PyErr_WarnEx(PyExc_UserWarning, fmt::format("{}: {}", span.str(), *warning).c_str(), 1) != 0)
        throw py::error_already_set();  // warnings turned into errors
  }

  // A @pl.jit.extern stub at a call with argument types `types`: one AIC or AIV declaration, or for a
  // mixed kernel `<name>_aic` + `<name>_aiv` and the Group `<name>` that calls both.
  ir::Result<ir::FunctionPtr> SpecialiseExtern(const std::string& name, const SubFunction& sub,
                                               const FunctionSource& stub, const std::string& types,
                                               const ir::Span& span) {
    auto declare = [&](const std::string& member, const std::string& core) {
      FunctionSource source = stub;
      source.name = member;
      source.type = core == "aic" ? ir::FunctionType::AIC : ir::FunctionType::AIV;
      source.attrs[kExternalSourceAttr] = sub.sources.at(core);
      if (!sub.include_dirs_json.empty()) source.attrs[ir::kExternalIncludeDirsAttr] = sub.include_dirs_json;
      if (core == "aiv" && sub.dual_aiv_dispatch) source.attrs[ir::kDualAivDispatchAttr] = true;
      return Specialise(source, fmt::format("{}({})", member, types), span);
    };
    if (sub.core_type != "mixed") return declare(name, sub.core_type);
    const std::string key = fmt::format("{}({})", name, types);
    if (auto it = program_.specialisations.find(key); it != program_.specialisations.end()) return it->second;
    auto aic = declare(name + "_aic", "aic");
    if (!aic) return aic;
    auto aiv = declare(name + "_aiv", "aiv");
    if (!aiv) return aiv;
    std::string group_name = name;
    for (int n = 1; program_.names.contains(group_name); ++n) group_name = fmt::format("{}_{}", name, n);
    program_.names.insert(group_name);
    auto group = ir::MakeGroupFunction(group_name, *aic, *aiv, (*aiv)->span());
    program_.specialisations[key] = group;
    program_.kernels.push_back(group);
    return group;
  }

  // Each argument must suit its parameter: a tensor for a tensor, a scalar for a scalar.
  static ir::Result<bool> CheckKernelArgs(const ir::Function& kernel, const std::vector<ir::ExprPtr>& args,
                                          const std::vector<std::string>& names, const ir::Span& span) {
    for (size_t i = 0; i < args.size(); ++i) {
      const auto& expected = kernel.params()[i]->type();
      const auto& actual = args[i]->type();
      const bool ok = expected->As<ir::ScalarType>() ? actual->As<ir::ScalarType>() != nullptr
                                                     : expected->equals(*actual);
      if (!ok)
        return MakeError(DiagnosticKind::Type,
                         fmt::format("{}() parameter '{}' expects {}, got {}", kernel.name(), names[i],
                                     expected->str(), actual->str()),
                         span);
    }
    return true;
  }

  ProgramContext& program_;
  const FunctionSource& source_;
  SourceMap map_;
  int kernel_depth_ = 0;  // > 0 inside a pl.at scope or an InCore function
  int manual_scopes_ = 0;  // > 0 inside a manual runtime scope
  int cluster_depth_ = 0;  // > 0 inside 'with pl.cluster()'
  DynamicBindings dynamic_;              // pl.dynamic names -> the extents the parameters gave them
  std::vector<ir::StmtPtr> prelude_;     // inlined bodies the statement being parsed depends on
  // The blocks being parsed, innermost last, each with the index of its statement being parsed.
  struct BlockPosition {
    py::list statements;
    size_t next = 0;
  };
  std::vector<BlockPosition> blocks_;
  std::unordered_map<std::string, ir::VarPtr> env_;
  // Parses a tile annotation's valid-shape extents (`pl.TileView(valid_shape=[64, vlen])`) in the
  // current scope.
  const ExprResolver expr_resolver_ = [this](py::handle node) { return ParseExpr(node); };
  std::vector<ir::ExprPtr> returns_;
  std::unordered_set<ir::VarPtr> kernel_values_;       // scalars and tiles computed in a closed kernel scope
  std::map<std::string, ir::Diagnostic> unavailable_;    // names a branch or loop left without a value
  // Statements the parser made (boolean conditions, shape unpacks), kept alive while parsed.
  std::vector<py::object> synthetic_nodes_;
  // The loops whose jumps are being parsed, innermost last: the jumps each owns, and each parsed
  // jump with the environment at it.
  struct JumpScope {
    py::handle loop;
    LoopControl control;
    std::vector<std::pair<ir::StmtPtr, Env>> parsed;
  };
  std::vector<JumpScope> jump_scopes_;
  std::vector<size_t> explicit_carries_;  // the number of carried values of each enclosing loop with init_values
  // Call results that are the tensor passed for the callee's output (RecordReturnedArg).
  std::unordered_map<const ir::Var*, const ir::Var*> returned_args_;
  std::unordered_map<const ir::Var*, ir::ExprPtr> orchestration_slices_;  // slice variable -> its load
  py::object function_def_;  // the def being parsed (FirstParameterTaking searches its calls)
  std::unordered_set<const ir::Var*> viewed_slices_;  // slice loads SliceAsView made views of
  // Orchestration slices the current kernel scope wrote through to their tensor (their loaded tiles
  // are stale from there on).
  std::unordered_set<const ir::Var*> written_through_;
  std::map<std::string, ir::TypePtr> assigned_types_;    // the last type each name was assigned
  std::string undefined_name_;                           // the name of the last "not defined" error
  // Values made by pl.create_tensor / pl.create_tile: storage whose contents nobody has written, so a
  // kernel loop may give such a name the type its body assigns (see RetypePlaceholders).
  std::set<uint64_t> placeholders_;  // by Var::id(), as known_ints
  // While an annotated assignment parses its value: the tile type it declares (for a tpop without a shape).
  ir::TypePtr declared_tile_;
  std::vector<int64_t> split_aiv_modes_;  // the split codes of the pl.split_aiv regions being parsed, innermost last
  int next_predicate_ = 0;  // numbers the values dispatch predicates read (pl.spmd_submit)
};

// ---- @pl.program classes ------------------------------------------------------------------------

std::string SpecKey(const std::map<std::string, TensorSpec>& specs) {
  std::vector<std::string> parts;
  for (const auto& [name, spec] : specs)
    parts.push_back(fmt::format("{}: [{}] {}", name, fmt::join(spec.shape, ", "), ir::DataTypeName(spec.dtype)));
  return fmt::format("{}", fmt::join(parts, "; "));
}

// The name of a generic method's next specialisation: its own for the first, then `name_1`, ...
std::string SpecialisationName(ProgramContext& program, const std::string& name) {
  if (program.specialised_methods[name].empty() && !program.names.contains(name)) return name;
  std::string candidate;
  for (int n = 1;; ++n) {
    candidate = fmt::format("{}_{}", name, n);
    if (!program.names.contains(candidate) && !program.methods->contains(candidate)) return candidate;
  }
}

ir::Result<const MethodSpecialisation*> SpecialiseMethod(ProgramContext& program, const Signature& generic,
                                                         const std::map<std::string, TensorSpec>& specs,
                                                         const ir::Span* call) {
  const SourceMap& map = generic.map;
  const std::string key = fmt::format("{}({})", generic.name, SpecKey(specs));
  if (auto it = program.method_specialisations.find(key); it != program.method_specialisations.end()) {
    if (!it->second.function)
      return MakeError(DiagnosticKind::Syntax, fmt::format("function '{}' calls itself", generic.name),
                       call ? *call : map.SpanOf(generic.def));
    return &it->second;
  }
  Constants bound;
  auto signature =
      SpecialiseSignature(generic, SpecialisationName(program, generic.name), specs, map, *program.constants, bound);
  if (!signature) {
    // At a call, the call is what to fix (or the annotation, which the hint points at).
    const ir::Diagnostic& error = signature.error();
    if (!call) return pypto::unexpected(error);
    return MakeError(error.kind, fmt::format("{}(): {}", generic.name, error.message), *call,
                     fmt::format("its parameter is declared at {}", error.span.str()));
  }
  auto it = program.method_specialisations
                .emplace(key, MethodSpecialisation{std::move(bound), std::move(*signature), nullptr})
                .first;
  MethodSpecialisation& entry = it->second;
  program.names.insert(entry.signature.name);
  FunctionSource source{.name = entry.signature.name, .def = generic.def, .map = map, .constants = &entry.constants,
                        .type = generic.type, .signature = &entry.signature};
  auto function = FunctionParser(program, source).Parse();
  if (!function) {
    program.names.erase(entry.signature.name);
    program.method_specialisations.erase(it);
    return pypto::unexpected(function.error());
  }
  entry.function = *function;
  program.specialised_methods[generic.name].push_back(*function);
  return &entry;
}

// The method a run starts in, chosen from the source as ChooseEntry chooses from the IR: the first
// Opaque or Orchestration method no other method calls (else the first uncalled one).
std::string EntryMethod(const std::vector<std::string>& order, const std::map<std::string, Signature>& methods) {
  std::set<std::string> called;
  for (const auto& name : order) called.merge(CalledMethods(methods.at(name).def));
  std::string first_uncalled;
  for (const auto& name : order) {
    if (called.contains(name)) continue;
    const auto type = methods.at(name).type;
    if (type == ir::FunctionType::Opaque || type == ir::FunctionType::Orchestration) return name;
    if (first_uncalled.empty()) first_uncalled = name;
  }
  return first_uncalled.empty() ? order.front() : first_uncalled;
}

// A module-level @pl.function as a method-to-be: its definition (given `self`), where it is, and the
// external_source its decorator evaluated to.
struct ModuleFunctionSignature : Signature {
  std::map<std::string, std::string> external_sources;
};

ir::Result<std::vector<ModuleFunctionSignature>> ReadModuleFunctions(const ProgramRequest& request) {
  std::vector<ModuleFunctionSignature> functions;
  for (const auto& function : request.module_functions) {
    SourceMap map{function.filename, function.line_offset, function.column_offset};
    auto def = ParseDef(function.source, map);
    if (!def) return pypto::unexpected(def.error());
    ModuleFunctionSignature signature;
    signature.name = function.name;
    def->attr("name") = function.name;  // the program's function takes the name it is called by
    signature.def = *def;
    signature.map = map;
    py::list params = def->attr("args").attr("args");
    if (py::len(params) > 0 && params[0].attr("arg").cast<std::string>() == "self")
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("module-level function '{}' takes 'self'", signature.name),
                       map.SpanOf(params[0]), "only methods of a @pl.program class take self");
    AddSelfParameter(*def);
    if (!function.external_source.empty()) signature.external_sources[signature.name] = function.external_source;
    functions.push_back(std::move(signature));
  }
  return functions;
}

ir::Result<ParsedProgram> ReadProgramClass(const ProgramRequest& request) {
  SourceMap map{request.filename, request.line_offset, request.column_offset};
  py::object module = py::module_::import("ast").attr("parse")(request.source, map.filename);
  // A program file starts as any Python file does: a docstring and the imports that make `pl`
  // a name; the program is the one class after them.
  py::list body;
  for (auto stmt : module.attr("body")) {
    const bool docstring = IsNode(stmt, "Expr") && IsNode(stmt.attr("value"), "Constant") &&
                           py::isinstance<py::str>(stmt.attr("value").attr("value"));
    if (!docstring && !IsNode(stmt, "Import") && !IsNode(stmt, "ImportFrom")) body.append(stmt);
  }
  if (py::len(body) != 1 || !IsNode(body[0], "ClassDef"))
    return MakeError(DiagnosticKind::Syntax, "expected exactly one class definition (a @pl.program)",
                     ir::Span{map.filename, map.line_offset + 1, 1 + map.column_offset});
  py::handle cls = body[0];
  const std::string program_name = cls.attr("name").cast<std::string>();
  std::map<std::string, Signature> methods;
  std::vector<std::string> order;
  auto module_functions = ReadModuleFunctions(request);
  if (!module_functions) return pypto::unexpected(module_functions.error());
  std::set<std::string> module_function_names;
  for (const auto& function : *module_functions) module_function_names.insert(function.name);
  BindModuleFunctionCalls(cls, module_function_names);
  for (auto stmt : cls.attr("body")) {
    if (IsNode(stmt, "Pass")) continue;
    if (IsNode(stmt, "Expr") && IsNode(stmt.attr("value"), "Constant") &&
        py::isinstance<py::str>(stmt.attr("value").attr("value")))
      continue;  // the docstring
    if (!IsNode(stmt, "FunctionDef"))
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("a @pl.program class holds only @pl.function methods, not '{}' statements",
                                   NodeType(stmt)),
                       map.SpanOf(stmt));
    Signature signature{.name = stmt.attr("name").cast<std::string>(),
                        .def = py::reinterpret_borrow<py::object>(stmt),
                        .map = map};
    if (methods.contains(signature.name))
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("function '{}' is defined twice in program '{}'", signature.name, program_name),
                       map.SpanOf(stmt));
    if (module_function_names.contains(signature.name))
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("program '{}' defines '{}', which names a module-level @pl.function it calls too",
                                   program_name, signature.name),
                       map.SpanOf(stmt), "rename the method or the module-level function");
    if (auto ok = ReadFunctionDecorator(stmt, map, request.external_sources, signature); !ok)
      return pypto::unexpected(ok.error());
    if (auto ok = ReadMethodSignature(stmt, map, &request.constants, signature); !ok)
      return pypto::unexpected(ok.error());
    order.push_back(signature.name);
    methods.emplace(order.back(), std::move(signature));
  }
  // Module-level functions follow the methods, as the printer shows them.
  for (auto& function : *module_functions) {
    BindModuleFunctionCalls(function.def, module_function_names);
    if (auto ok = ReadFunctionDecorator(function.def, function.map, function.external_sources, function); !ok)
      return pypto::unexpected(ok.error());
    if (auto ok = ReadMethodSignature(function.def, function.map, &request.constants, function); !ok)
      return pypto::unexpected(ok.error());
    order.push_back(function.name);
    methods.emplace(order.back(), std::move(function));
  }
  if (order.empty())
    return MakeError(DiagnosticKind::Syntax, fmt::format("program '{}' defines no @pl.function", program_name),
                     map.SpanOf(cls));
  ProgramContext program{.methods = &methods, .program_name = program_name, .constants = &request.constants};
  // Static methods first; their calls specialise the generic methods they call.
  std::map<std::string, ir::FunctionPtr> parsed;
  for (const auto& name : order) {
    const Signature& signature = methods.at(name);
    if (signature.generic()) continue;
    FunctionSource source{.name = name, .def = signature.def, .map = signature.map, .constants = &request.constants,
                          .type = signature.type, .signature = &signature};
    auto function = FunctionParser(program, source).Parse();
    if (!function) return pypto::unexpected(function.error());
    parsed[name] = *function;
  }
  // A generic entry takes its dimensions from the tensors of a run.
  const std::string entry = EntryMethod(order, methods);
  if (const Signature& signature = methods.at(entry); signature.generic()) {
    if (!request.entry_specs) {
      std::vector<std::string> params;
      for (const auto& param : signature.params) params.push_back(param->name_hint());
      return ParsedProgram{.dynamic_entry = DynamicEntry{.function = entry, .params = std::move(params),
                                                          .dims = {signature.dynamic_dims.begin(),
                                                                   signature.dynamic_dims.end()}}};
    }
    auto specialised = SpecialiseMethod(program, signature, *request.entry_specs, nullptr);
    if (!specialised) return pypto::unexpected(specialised.error());
  }
  std::vector<ir::FunctionPtr> functions;
  for (const auto& name : order) {
    const Signature& signature = methods.at(name);
    if (!signature.generic()) {
      functions.push_back(parsed.at(name));
      continue;
    }
    const auto& specialisations = program.specialised_methods[name];
    if (specialisations.empty())
      return MakeError(DiagnosticKind::Type,
                       fmt::format("function '{}' has the dynamic dimension '{}' in its parameters, but no function "
                                   "calls it, so nothing gives it an extent",
                                   name, *signature.dynamic_dims.begin()),
                       map.SpanOf(signature.def), "call it with tensors, or annotate its parameters with numbers");
    functions.insert(functions.end(), specialisations.begin(), specialisations.end());
  }
  const std::string entry_name = ChooseEntry(functions);
  auto program_ir = std::make_shared<ir::Program>(program_name, std::move(functions), entry_name);
  if (auto ok = CheckHardSyncallLaunches(*program_ir); !ok) return pypto::unexpected(ok.error());
  return ParsedProgram{.program = program_ir};
}

// A Python exception raised while reading the source; a syntax error keeps its position in the file.
ir::Diagnostic PythonDiagnostic(py::error_already_set& e, const SourceMap& map) {
  ir::Span span{map.filename, map.line_offset + 1, 1};
  std::string message = e.what();
  if (e.matches(PyExc_SyntaxError)) {
    py::object error = e.value();
    message = py::str(error.attr("msg"));
    if (!error.attr("lineno").is_none()) span.line = error.attr("lineno").cast<int>() + map.line_offset;
    if (!error.attr("offset").is_none()) span.column = error.attr("offset").cast<int>() + map.column_offset;
  }
  return ir::Diagnostic{DiagnosticKind::Syntax, message, span, {}};
}

}  // namespace

ir::Result<ir::ProgramPtr> ParseJitFunction(const ParseRequest& request) {
  try {
    SourceMap map{request.filename, request.line_offset, request.column_offset};
    auto def = ParseDef(request.source, map);
    if (!def) return pypto::unexpected(def.error());
    ProgramContext program{.request = &request};
    FunctionSource entry_source{.name = def->attr("name").cast<std::string>(), .def = *def, .map = map,
                                .constants = &request.constants, .tensor_specs = request.tensor_specs};
    program.names.insert(entry_source.name);
    auto entry = FunctionParser(program, entry_source).Parse();
    if (!entry) return pypto::unexpected(entry.error());
    std::vector<ir::FunctionPtr> functions = program.kernels;
    functions.insert(functions.begin(), *entry);
    std::string program_name = request.program_name.empty() ? "_jit_" + (*entry)->name() : request.program_name;
    auto parsed = std::make_shared<ir::Program>(program_name, std::move(functions), (*entry)->name());
    if (auto ok = CheckHardSyncallLaunches(*parsed); !ok) return pypto::unexpected(ok.error());
    return parsed;
  } catch (py::error_already_set& e) {
    // A Python syntax error carries its own position; report it in the user's file.
    ir::Span span{request.filename, request.line_offset + 1, 1};
    std::string message = e.what();
    if (e.matches(PyExc_SyntaxError)) {
      py::object error = e.value();
      message = py::str(error.attr("msg"));
      if (!error.attr("lineno").is_none()) span.line = error.attr("lineno").cast<int>() + request.line_offset;
      if (!error.attr("offset").is_none()) span.column = error.attr("offset").cast<int>() + request.column_offset;
    }
    return MakeError(DiagnosticKind::Syntax, message, span);
  }
}

ir::Result<ParsedProgram> ParseProgramClass(const ProgramRequest& request) {
  try {
    return ReadProgramClass(request);
  } catch (py::error_already_set& e) {
    SourceMap map{request.filename, request.line_offset, request.column_offset};
    return pypto::unexpected(PythonDiagnostic(e, map));
  }
}

ir::Result<ir::ProgramPtr> ParseProgram(const ProgramRequest& request) {
  auto parsed = ParseProgramClass(request);
  if (!parsed) return pypto::unexpected(parsed.error());
  if (parsed->program) return parsed->program;
  const DynamicEntry& entry = *parsed->dynamic_entry;
  return MakeError(DiagnosticKind::Type,
                   fmt::format("the entry '{}' has the dynamic dimensions {}: the program is compiled for the "
                               "shapes of the tensors it runs with",
                               entry.function, fmt::join(entry.dims, ", ")),
                   ir::Span{request.filename, request.line_offset + 1, 1 + request.column_offset},
                   "give the entry's tensors (ProgramRequest::entry_specs)");
}

}  // namespace pypto::frontend
