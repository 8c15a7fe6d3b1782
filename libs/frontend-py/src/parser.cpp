// The AST walker: one Python function definition -> one IR function.
#include "pypto/frontend/parser.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <variant>

#include "ast_node.h"
#include "op_resolver.h"
#include "pypto/ir/op_registry.h"
#include "type_resolver.h"

namespace pypto::frontend {
namespace {

using ir::DiagnosticKind;
using ir::MakeError;

// An argument as written at an op call: an expression, or a compile-time attribute (pl.FP32,
// pl.Mem.Vec, "round").
using ArgValue = std::variant<ir::ExprPtr, ir::OpAttr>;

// What every function parser of one program shares: the request, and the kernels parsed so far
// (one per specialisation of a `@pl.jit.incore` function).
struct ProgramContext {
  const ParseRequest& request;
  std::vector<ir::FunctionPtr> kernels;
  std::map<std::string, ir::FunctionPtr> specialisations;  // "name(arg types)" -> kernel
  std::set<std::string> names;                              // function names taken
  std::set<std::string> parsing;                            // sub-functions being parsed (recursion)
};

// One function's source as the parser sees it.
struct FunctionSource {
  std::string name;
  py::object def;  // the ast.FunctionDef
  SourceMap map;
  const std::map<std::string, Constant>* constants;
  std::map<std::string, TensorSpec> tensor_specs;
  ir::FunctionType type = ir::FunctionType::Opaque;
};

ir::Result<py::object> ParseDef(const std::string& source, const SourceMap& map) {
  py::object module = py::module_::import("ast").attr("parse")(source, map.filename);
  py::list body = module.attr("body");
  if (py::len(body) != 1 || !IsNode(body[0], "FunctionDef"))
    return MakeError(DiagnosticKind::Syntax, "expected exactly one function definition",
                     ir::Span{map.filename, map.line_offset + 1, 1});
  return py::object(body[0]);
}

class FunctionParser {
 public:
  FunctionParser(ProgramContext& program, const FunctionSource& source)
      : program_(program), source_(source), map_(source.map),
        kernel_depth_(source.type == ir::FunctionType::InCore ? 1 : 0) {}

  ir::Result<ir::FunctionPtr> Parse() { return ParseFunction(source_.def); }

 private:
  ir::Result<ir::FunctionPtr> ParseFunction(py::handle def) {
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
                                   spec_it == source_.tensor_specs.end() ? nullptr : &spec_it->second, map_);
      if (!resolved) return pypto::unexpected(resolved.error());
      auto var = std::make_shared<ir::Var>(name, resolved->type, map_.SpanOf(arg));
      env_[name] = var;
      params.push_back(var);
      directions.push_back(resolved->direction);
    }
    auto body = ParseBlock(def.attr("body"));
    if (!body) return pypto::unexpected(body.error());
    std::vector<ir::TypePtr> return_types;
    for (const auto& value : returns_) return_types.push_back(value->type());
    return std::make_shared<ir::Function>(source_.name, params, directions, return_types, *body, source_.type,
                                          std::map<std::string, ir::AttrValue>{}, map_.SpanOf(def));
  }

  ir::Result<ir::StmtPtr> ParseBlock(py::handle statements) {
    std::vector<ir::StmtPtr> stmts;
    for (auto stmt : statements) {
      auto parsed = ParseStatement(stmt);
      if (!parsed) return pypto::unexpected(parsed.error());
      if (*parsed) stmts.push_back(*parsed);
    }
    return std::make_shared<ir::SeqStmts>(std::move(stmts));
  }

  // Returns null for statements that produce no IR (docstrings, pass).
  ir::Result<ir::StmtPtr> ParseStatement(py::handle stmt) {
    std::string type = NodeType(stmt);
    ir::Span span = map_.SpanOf(stmt);
    if (type == "Pass") return ir::StmtPtr{};
    if (type == "Expr") {
      py::handle value = stmt.attr("value");
      if (IsNode(value, "Constant") && py::isinstance<py::str>(value.attr("value"))) return ir::StmtPtr{};
      auto expr = ParseExpr(value);
      if (!expr) return pypto::unexpected(expr.error());
      return ir::StmtPtr(std::make_shared<ir::EvalStmt>(*expr, span));
    }
    if (type == "Assign" || type == "AnnAssign") return ParseAssign(stmt, type == "AnnAssign");
    if (type == "With") return ParseWith(stmt);
    if (type == "For") return ParseFor(stmt);
    if (type == "Return") return ParseReturn(stmt);
    return MakeError(DiagnosticKind::Syntax, fmt::format("'{}' statements are not supported in kernels yet", type),
                     span);
  }

  ir::Result<ir::StmtPtr> ParseAssign(py::handle stmt, bool annotated) {
    py::handle target = annotated ? stmt.attr("target") : py::handle(py::list(stmt.attr("targets"))[0]);
    if (!annotated && py::len(stmt.attr("targets")) != 1)
      return MakeError(DiagnosticKind::Syntax, "chained assignment is not supported", map_.SpanOf(stmt));
    if (!IsNode(target, "Name"))
      return MakeError(DiagnosticKind::Syntax, "only assignment to a plain name is supported yet", map_.SpanOf(target));
    if (stmt.attr("value").is_none())
      return MakeError(DiagnosticKind::Syntax, "an annotation without a value declares nothing", map_.SpanOf(stmt));
    auto value = ParseExpr(stmt.attr("value"));
    if (!value) return pypto::unexpected(value.error());
    std::string name = target.attr("id").cast<std::string>();
    if (annotated)
      if (auto ok = CheckDeclaredType(stmt.attr("annotation"), name, (*value)->type(), map_); !ok)
        return pypto::unexpected(ok.error());
    auto var = std::make_shared<ir::Var>(name, (*value)->type(), map_.SpanOf(target));
    env_[name] = var;
    return ir::StmtPtr(std::make_shared<ir::AssignStmt>(var, *value, map_.SpanOf(stmt)));
  }

  ir::Result<ir::StmtPtr> ParseWith(py::handle stmt) {
    ir::Span span = map_.SpanOf(stmt);
    py::list items = stmt.attr("items");
    if (py::len(items) != 1)
      return MakeError(DiagnosticKind::Syntax, "one context manager per 'with' statement", span);
    py::handle context = items[0].attr("context_expr");
    if (!IsNode(context, "Call") || DottedName(context.attr("func")) != "pl.at")
      return MakeError(DiagnosticKind::Syntax, "only 'with pl.at(...)' scopes are supported yet", map_.SpanOf(context));
    if (!items[0].attr("optional_vars").is_none())
      return MakeError(DiagnosticKind::Syntax, "'with pl.at(...) as tid' is not supported yet", span);
    std::string level, name_hint;
    for (auto keyword : context.attr("keywords")) {
      std::string key = keyword.attr("arg").is_none() ? "" : keyword.attr("arg").cast<std::string>();
      py::handle value = keyword.attr("value");
      if (key == "level") {
        level = DottedName(value);
      } else if (key == "name_hint" && IsNode(value, "Constant") && py::isinstance<py::str>(value.attr("value"))) {
        name_hint = value.attr("value").cast<std::string>();
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
                       map_.SpanOf(context), source_.type == ir::FunctionType::InCore
                                                 ? "a @pl.jit.incore function is already one kernel"
                                                 : "nested pl.at scopes are not supported yet");
    ++kernel_depth_;
    auto body = ParseBlock(stmt.attr("body"));
    --kernel_depth_;
    if (!body) return pypto::unexpected(body.error());
    return ir::StmtPtr(std::make_shared<ir::InCoreScopeStmt>(name_hint, *body, span));
  }

  // `for i in pl.range([start,] stop[, step]):` and the pl.parallel / pl.unroll / pl.pipeline forms.
  ir::Result<ir::StmtPtr> ParseFor(py::handle stmt) {
    ir::Span span = map_.SpanOf(stmt);
    py::handle target = stmt.attr("target"), iter = stmt.attr("iter");
    if (!IsNode(target, "Name"))
      return MakeError(DiagnosticKind::Syntax, "the loop variable must be a plain name", map_.SpanOf(target));
    if (py::len(stmt.attr("orelse")) > 0)
      return MakeError(DiagnosticKind::Syntax, "'for ... else' is not supported in kernels", span);
    static const std::map<std::string, ir::ForKind> kLoops = {{"pl.range", ir::ForKind::Sequential},
                                                              {"pl.parallel", ir::ForKind::Parallel},
                                                              {"pl.unroll", ir::ForKind::Unroll},
                                                              {"pl.pipeline", ir::ForKind::Pipeline}};
    std::string callee = IsNode(iter, "Call") ? DottedName(iter.attr("func")) : "";
    auto kind = kLoops.find(callee);
    if (kind == kLoops.end())
      return MakeError(DiagnosticKind::Syntax, "kernel loops iterate over pl.range(...), pl.parallel(...), "
                       "pl.unroll(...) or pl.pipeline(...)", map_.SpanOf(iter));
    for (auto keyword : iter.attr("keywords")) {
      std::string key = keyword.attr("arg").is_none() ? "**" : keyword.attr("arg").cast<std::string>();
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

    std::string name = target.attr("id").cast<std::string>();
    auto loop_var = std::make_shared<ir::Var>(name, std::make_shared<ir::ScalarType>(ir::DataType::INDEX),
                                              map_.SpanOf(target));
    auto outer = env_;
    env_[name] = loop_var;
    auto body = ParseBlock(stmt.attr("body"));
    if (!body) return pypto::unexpected(body.error());
    // Values carried from one iteration to the next need iter_args, which are not modelled yet.
    for (const auto& [var_name, var] : outer) {
      auto it = env_.find(var_name);
      if (var_name != name && it != env_.end() && it->second != var)
        return MakeError(DiagnosticKind::Syntax,
                         fmt::format("'{}' is reassigned inside the loop; loop-carried values are not supported yet",
                                     var_name),
                         it->second->span());
    }
    env_ = std::move(outer);
    return ir::StmtPtr(std::make_shared<ir::ForStmt>(loop_var, start, stop, step, *body, kind->second, span));
  }

  ir::Result<ir::StmtPtr> ParseReturn(py::handle stmt) {
    std::vector<ir::ExprPtr> values;
    py::handle value = stmt.attr("value");
    if (!value.is_none()) {
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
    }
    returns_ = values;
    return ir::StmtPtr(std::make_shared<ir::ReturnStmt>(std::move(values), map_.SpanOf(stmt)));
  }

  ir::Result<ir::ExprPtr> ParseExpr(py::handle node) {
    std::string type = NodeType(node);
    ir::Span span = map_.SpanOf(node);
    if (type == "Name") {
      std::string name = node.attr("id").cast<std::string>();
      auto it = env_.find(name);
      if (it != env_.end()) return ir::ExprPtr(it->second);
      auto constant = source_.constants->find(name);
      if (constant != source_.constants->end()) return ConstantExpr(constant->second, span);
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
    if (type == "BinOp") return ParseBinOp(node);
    if (type == "UnaryOp") return ParseUnaryOp(node);
    return MakeError(DiagnosticKind::Syntax, fmt::format("'{}' expressions are not supported in kernels yet", type),
                     span);
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
        {"FloorDiv", ir::BinaryOp::FloorDiv}, {"Mod", ir::BinaryOp::FloorMod}, {"Div", ir::BinaryOp::FloatDiv}};
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
    return MakeError(DiagnosticKind::Type, "only int, float and bool constants are supported", span);
  }

  ir::Result<ir::ExprPtr> ParseCall(py::handle node) {
    std::string name = DottedName(node.attr("func"));
    ir::Span span = map_.SpanOf(node.attr("func"));
    if (program_.request.functions.contains(name)) return ParseKernelCall(name, node);
    if (!name.starts_with("pl."))
      return MakeError(DiagnosticKind::UnknownOperation,
                       fmt::format("cannot call '{}' in a kernel; only pl.* operations and @pl.jit.incore functions "
                                   "are available",
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
      auto value = ParseArgValue(keyword.attr("value"));
      if (!value) return pypto::unexpected(value.error());
      keywords.emplace_back(keyword.attr("arg").cast<std::string>(), std::move(*value), keyword.attr("value"));
    }
    std::vector<ir::ExprPtr> operands;
    for (const auto& [value, arg] : positional)
      if (const auto* expr = std::get_if<ir::ExprPtr>(&value)) operands.push_back(*expr);
    if (auto scalar = ScalarCall(name, operands, positional.size(), keywords.size(), map_.SpanOf(node))) return *scalar;

    auto op = ResolveOp(name, operands, kernel_depth_ > 0 ? CallContext::Kernel : CallContext::Orchestration, span);
    if (!op) return pypto::unexpected(op.error());
    CallBuilder call(name, **op, span);
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
                         fmt::format("'{}' has no argument '{}' (arguments: {})", name, key, fmt::join(names, ", ")),
                         map_.SpanOf(arg));
      }
      if (auto ok = call.Bind(*param, std::move(value), map_.SpanOf(arg)); !ok) return pypto::unexpected(ok.error());
    }
    return call.Build(map_.SpanOf(node));
  }

  // pl.add / pl.mul / pl.max ... on two scalars is scalar arithmetic, as the infix operators are.
  std::optional<ir::Result<ir::ExprPtr>> ScalarCall(const std::string& name, const std::vector<ir::ExprPtr>& operands,
                                                    size_t positional, size_t keywords, const ir::Span& span) {
    auto op = ScalarArithmetic(name);
    if (!op || keywords > 0 || positional != 2 || operands.size() != 2) return std::nullopt;
    if (!operands[0]->type()->As<ir::ScalarType>() || !operands[1]->type()->As<ir::ScalarType>()) return std::nullopt;
    return ir::MakeBinary(*op, operands[0], operands[1], span);
  }

  // A dtype (pl.FP32), a memory space (pl.Mem.Vec / pl.MemorySpace.Vec) or a string literal is an
  // attribute; anything else an expression.
  ir::Result<ArgValue> ParseArgValue(py::handle node) {
    const std::string dotted = DottedName(node);
    if (dotted.starts_with("pl.") && !env_.contains(dotted)) {
      if (auto dtype = ir::DataTypeFromName(std::string_view(dotted).substr(3))) return ArgValue(ir::OpAttr(*dtype));
      for (std::string_view prefix : {"pl.Mem.", "pl.MemorySpace."}) {
        if (!dotted.starts_with(prefix)) continue;
        if (auto space = ir::MemorySpaceFromName(std::string_view(dotted).substr(prefix.size())))
          return ArgValue(ir::OpAttr(*space));
        return MakeError(DiagnosticKind::Type, fmt::format("'{}' is not a memory space", dotted), map_.SpanOf(node),
                         "memory spaces: Vec, Mat, Left, Right, Acc, Bias");
      }
    }
    if (IsNode(node, "Constant") && py::isinstance<py::str>(node.attr("value")))
      return ArgValue(ir::OpAttr(node.attr("value").cast<std::string>()));
    auto expr = ParseExpr(node);
    if (!expr) return pypto::unexpected(expr.error());
    return ArgValue(*expr);
  }

  // Collects an op call's arguments by parameter, then builds the typed call.
  class CallBuilder {
   public:
    CallBuilder(std::string dsl_name, const ir::OpDef& op, ir::Span span)
        : dsl_name_(std::move(dsl_name)), op_(op), span_(std::move(span)), args_(op.max_args()) {}

    ir::Result<bool> Bind(const ir::OpParam& param, ArgValue value, const ir::Span& at) {
      if (param.is_attr) {
        if (std::any_of(kwargs_.begin(), kwargs_.end(), [&](const auto& kv) { return kv.first == param.name; }))
          return Twice(param, at);
        auto attr = ToAttr(param, value, at);
        if (!attr) return pypto::unexpected(attr.error());
        kwargs_.emplace_back(param.name, std::move(*attr));
        return true;
      }
      const auto* expr = std::get_if<ir::ExprPtr>(&value);
      if (!expr)
        return MakeError(DiagnosticKind::Type,
                         fmt::format("'{}' argument '{}' must be a value, got {}", dsl_name_, param.name,
                                     ir::OpAttrText(std::get<ir::OpAttr>(value))),
                         at);
      size_t index = 0;
      for (const auto& p : op_.params) {
        if (&p == &param) break;
        if (!p.is_attr) ++index;
      }
      if (args_[index]) return Twice(param, at);
      args_[index] = *expr;
      return true;
    }

    ir::Result<ir::ExprPtr> Build(const ir::Span& call_span) {
      size_t given = args_.size();
      while (given > 0 && !args_[given - 1]) --given;
      const auto names = op_.arg_names();
      for (size_t i = 0; i < std::max(given, op_.min_args()); ++i)
        if (i >= given || !args_[i])
          return MakeError(DiagnosticKind::InvalidOperation,
                           fmt::format("'{}' is missing argument '{}'", dsl_name_, names[i]), span_);
      args_.resize(given);
      for (const auto& param : op_.params) {
        if (!param.is_attr || !param.required) continue;
        if (std::none_of(kwargs_.begin(), kwargs_.end(), [&](const auto& kv) { return kv.first == param.name; }))
          return MakeError(DiagnosticKind::InvalidOperation,
                           fmt::format("'{}' is missing argument '{}'", dsl_name_, param.name), span_);
      }
      auto call = ir::OpRegistry::Get().CreateCall(op_.name, std::move(args_), std::move(kwargs_), call_span);
      if (!call) {
        auto error = call.error();
        error.message = fmt::format("{}: {}", dsl_name_, error.message);
        return pypto::unexpected(error);
      }
      return ir::ExprPtr(*call);
    }

   private:
    pypto::unexpected<ir::Diagnostic> Twice(const ir::OpParam& param, const ir::Span& at) const {
      return MakeError(DiagnosticKind::InvalidOperation,
                       fmt::format("'{}' got argument '{}' twice", dsl_name_, param.name), at);
    }

    // Literals convert to the attribute's kind (an int literal is a valid float attribute).
    ir::Result<ir::OpAttr> ToAttr(const ir::OpParam& param, const ArgValue& value, const ir::Span& at) const {
      const ir::OpAttrKind kind = param.attr_kind;
      if (const auto* attr = std::get_if<ir::OpAttr>(&value)) {
        if (ir::KindOf(*attr) == kind) return *attr;
      } else {
        const ir::ExprPtr& expr = std::get<ir::ExprPtr>(value);
        if (const auto* i = expr->As<ir::ConstInt>()) {
          if (kind == ir::OpAttrKind::Int) return ir::OpAttr(i->value());
          if (kind == ir::OpAttrKind::Float) return ir::OpAttr(static_cast<double>(i->value()));
        }
        if (const auto* f = expr->As<ir::ConstFloat>(); f && kind == ir::OpAttrKind::Float) return ir::OpAttr(f->value());
        if (const auto* b = expr->As<ir::ConstBool>(); b && kind == ir::OpAttrKind::Bool) return ir::OpAttr(b->value());
      }
      return MakeError(DiagnosticKind::Type,
                       fmt::format("'{}' argument '{}' must be a {} known at compile time", dsl_name_, param.name,
                                   ir::OpAttrKindName(kind)),
                       at);
    }

    std::string dsl_name_;
    const ir::OpDef& op_;
    ir::Span span_;
    std::vector<ir::ExprPtr> args_;
    ir::Call::Kwargs kwargs_;
  };

  // `out = kernel(a, b, out)`: a call to a @pl.jit.incore function, specialised on the argument types.
  ir::Result<ir::ExprPtr> ParseKernelCall(const std::string& name, py::handle node) {
    const ir::Span span = map_.SpanOf(node);
    const SubFunction& sub = program_.request.functions.at(name);
    if (kernel_depth_ > 0)
      return MakeError(DiagnosticKind::Syntax, fmt::format("kernel '{}' is called inside a kernel", name), span,
                       "call kernels from the @pl.jit function, outside pl.at scopes");
    if (sub.form != "incore")
      return MakeError(DiagnosticKind::Syntax, fmt::format("calls to @pl.jit.{} functions are not supported yet", sub.form),
                       span);
    SourceMap map{sub.filename, sub.line_offset, sub.column_offset};
    auto def = ParseDef(sub.source, map);
    if (!def) return pypto::unexpected(def.error());
    std::vector<std::string> param_names;
    for (auto arg : def->attr("args").attr("args")) param_names.push_back(arg.attr("arg").cast<std::string>());

    std::vector<ir::ExprPtr> args(param_names.size());
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
    for (auto keyword : node.attr("keywords")) {
      std::string key = keyword.attr("arg").is_none() ? "**" : keyword.attr("arg").cast<std::string>();
      auto it = std::find(param_names.begin(), param_names.end(), key);
      if (it == param_names.end())
        return MakeError(DiagnosticKind::Type, fmt::format("{}() has no parameter '{}'", name, key),
                         map_.SpanOf(keyword));
      auto expr = ParseExpr(keyword.attr("value"));
      if (!expr) return pypto::unexpected(expr.error());
      auto& slot = args[static_cast<size_t>(it - param_names.begin())];
      if (slot)
        return MakeError(DiagnosticKind::Type, fmt::format("{}() got parameter '{}' twice", name, key),
                         map_.SpanOf(keyword));
      slot = *expr;
    }
    std::vector<std::string> key_parts;
    FunctionSource kernel_source{.name = name, .def = *def, .map = map, .constants = &sub.constants,
                                 .type = ir::FunctionType::InCore};
    for (size_t i = 0; i < args.size(); ++i) {
      if (!args[i])
        return MakeError(DiagnosticKind::Type, fmt::format("{}() is missing parameter '{}'", name, param_names[i]),
                         span);
      if (const auto* tensor = args[i]->type()->As<ir::TensorType>())
        kernel_source.tensor_specs[param_names[i]] = TensorSpec{tensor->shape(), tensor->dtype()};
      key_parts.push_back(args[i]->type()->str());
    }
    auto kernel = Specialise(kernel_source, fmt::format("{}({})", name, fmt::join(key_parts, ", ")), span);
    if (!kernel) return pypto::unexpected(kernel.error());
    if (auto ok = CheckKernelArgs(**kernel, args, param_names, span); !ok) return pypto::unexpected(ok.error());
    const auto& returns = (*kernel)->return_types();
    ir::TypePtr type = returns.size() == 1 ? returns[0]
                       : returns.empty()   ? ir::TypePtr(std::make_shared<ir::UnknownType>())
                                           : ir::TypePtr(std::make_shared<ir::TupleType>(returns));
    return ir::ExprPtr(std::make_shared<ir::Call>((*kernel)->name(), std::move(args), type, span));
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
  std::unordered_map<std::string, ir::VarPtr> env_;
  std::vector<ir::ExprPtr> returns_;
};

}  // namespace

ir::Result<ir::ProgramPtr> ParseJitFunction(const ParseRequest& request) {
  try {
    SourceMap map{request.filename, request.line_offset, request.column_offset};
    auto def = ParseDef(request.source, map);
    if (!def) return pypto::unexpected(def.error());
    ProgramContext program{.request = request};
    FunctionSource entry_source{.name = def->attr("name").cast<std::string>(), .def = *def, .map = map,
                                .constants = &request.constants, .tensor_specs = request.tensor_specs};
    program.names.insert(entry_source.name);
    auto entry = FunctionParser(program, entry_source).Parse();
    if (!entry) return pypto::unexpected(entry.error());
    std::vector<ir::FunctionPtr> functions = program.kernels;
    functions.insert(functions.begin(), *entry);
    std::string program_name = request.program_name.empty() ? "_jit_" + (*entry)->name() : request.program_name;
    return std::make_shared<ir::Program>(program_name, std::move(functions), (*entry)->name());
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

}  // namespace pypto::frontend
