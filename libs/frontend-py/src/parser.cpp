// The AST walker: one Python function definition -> one IR function.
#include "pypto/frontend/parser.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include <unordered_map>

#include "ast_node.h"
#include "op_resolver.h"
#include "pypto/ir/op_registry.h"
#include "type_resolver.h"

namespace pypto::frontend {
namespace {

using ir::DiagnosticKind;
using ir::MakeError;

class FunctionParser {
 public:
  explicit FunctionParser(const ParseRequest& request)
      : request_(request), map_{request.filename, request.line_offset, request.column_offset} {}

  ir::Result<ir::ProgramPtr> Parse(py::handle module) {
    py::list body = module.attr("body");
    if (py::len(body) != 1 || !IsNode(body[0], "FunctionDef"))
      return MakeError(DiagnosticKind::Syntax, "expected exactly one function definition",
                       ir::Span{request_.filename, request_.line_offset + 1, 1});
    auto function = ParseFunction(body[0]);
    if (!function) return pypto::unexpected(function.error());
    std::string program_name =
        request_.program_name.empty() ? "_jit_" + (*function)->name() : request_.program_name;
    return std::make_shared<ir::Program>(program_name, std::vector<ir::FunctionPtr>{*function}, (*function)->name());
  }

 private:
  ir::Result<ir::FunctionPtr> ParseFunction(py::handle def) {
    std::vector<ir::VarPtr> params;
    std::vector<ir::ParamDirection> directions;
    py::handle arguments = def.attr("args");
    if (!arguments.attr("vararg").is_none() || !arguments.attr("kwarg").is_none())
      return MakeError(DiagnosticKind::Syntax, "*args and **kwargs are not supported in kernels", map_.SpanOf(def));
    for (auto arg : arguments.attr("args")) {
      std::string name = arg.attr("arg").cast<std::string>();
      auto spec_it = request_.tensor_specs.find(name);
      if (arg.attr("annotation").is_none())
        return MakeError(DiagnosticKind::Type, fmt::format("parameter '{}' is missing a type annotation", name),
                         map_.SpanOf(arg));
      auto resolved = ResolveParam(arg.attr("annotation"), name,
                                   spec_it == request_.tensor_specs.end() ? nullptr : &spec_it->second, map_);
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
    return std::make_shared<ir::Function>(def.attr("name").cast<std::string>(), params, directions, return_types,
                                          *body, ir::FunctionType::Opaque, std::map<std::string, ir::AttrValue>{},
                                          map_.SpanOf(def));
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
    auto body = ParseBlock(stmt.attr("body"));
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
      auto constant = request_.constants.find(name);
      if (constant != request_.constants.end()) return ConstantExpr(constant->second, span);
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
    if (!name.starts_with("pl."))
      return MakeError(DiagnosticKind::UnknownOperation,
                       fmt::format("cannot call '{}' in a kernel; only pl.* operations are available",
                                   name.empty() ? "<expression>" : name),
                       span);
    std::vector<ir::ExprPtr> args;
    for (auto arg : node.attr("args")) {
      auto expr = ParseExpr(arg);
      if (!expr) return pypto::unexpected(expr.error());
      args.push_back(*expr);
    }
    std::vector<std::pair<std::string, ir::ExprPtr>> keywords;
    for (auto keyword : node.attr("keywords")) {
      if (keyword.attr("arg").is_none())
        return MakeError(DiagnosticKind::Syntax, "**kwargs are not supported in op calls", map_.SpanOf(keyword));
      auto expr = ParseExpr(keyword.attr("value"));
      if (!expr) return pypto::unexpected(expr.error());
      keywords.emplace_back(keyword.attr("arg").cast<std::string>(), *expr);
    }
    auto op = ResolveOp(name, args, span);
    if (!op) return pypto::unexpected(op.error());
    // Keywords naming an op argument fill its position; the op rejects missing ones by arity.
    for (auto& [key, value] : keywords) {
      const auto& names = (*op)->arg_names;
      auto it = std::find(names.begin(), names.end(), key);
      if (it == names.end())
        return MakeError(DiagnosticKind::InvalidOperation,
                         fmt::format("'{}' has no argument '{}' (arguments: {})", name, key, fmt::join(names, ", ")),
                         span);
      size_t index = static_cast<size_t>(it - names.begin());
      if (args.size() <= index) args.resize(index + 1);
      if (args[index])
        return MakeError(DiagnosticKind::InvalidOperation, fmt::format("'{}' got argument '{}' twice", name, key), span);
      args[index] = value;
    }
    for (size_t i = 0; i < args.size(); ++i)
      if (!args[i])
        return MakeError(DiagnosticKind::InvalidOperation,
                         fmt::format("'{}' is missing argument '{}'", name, (*op)->arg_names[i]), span);
    auto call = ir::OpRegistry::Get().CreateCall((*op)->name, std::move(args), {}, map_.SpanOf(node));
    if (!call) {
      auto error = call.error();
      error.message = fmt::format("{}: {}", name, error.message);
      return pypto::unexpected(error);
    }
    return ir::ExprPtr(*call);
  }

  const ParseRequest& request_;
  SourceMap map_;
  std::unordered_map<std::string, ir::VarPtr> env_;
  std::vector<ir::ExprPtr> returns_;
};

}  // namespace

ir::Result<ir::ProgramPtr> ParseJitFunction(const ParseRequest& request) {
  try {
    py::object module = py::module_::import("ast").attr("parse")(request.source, request.filename);
    return FunctionParser(request).Parse(module);
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
