#include "program_signature.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "external_decl.h"
#include "pypto/ir/functor.h"

namespace pypto::frontend {

using ir::DiagnosticKind;
using ir::MakeError;

namespace {

constexpr ir::FunctionType kFunctionTypes[] = {
    ir::FunctionType::Opaque, ir::FunctionType::Orchestration, ir::FunctionType::InCore, ir::FunctionType::AIC,
    ir::FunctionType::AIV,    ir::FunctionType::Group,         ir::FunctionType::Spmd,   ir::FunctionType::Inline};

ir::Result<ir::FunctionType> ReadFunctionType(py::handle node, const SourceMap& map) {
  const std::string text = DottedName(node);
  constexpr std::string_view kPrefix = "pl.FunctionType.";
  if (text.starts_with(kPrefix)) {
    for (auto type : kFunctionTypes)
      if (ir::FunctionTypeName(type) == std::string_view(text).substr(kPrefix.size())) return type;
  }
  std::vector<std::string> names;
  for (auto type : kFunctionTypes) names.emplace_back(ir::FunctionTypeName(type));
  return MakeError(DiagnosticKind::Type,
                   fmt::format("unknown function type '{}'", text.empty() ? NodeType(node) : text), map.SpanOf(node),
                   fmt::format("function types: pl.FunctionType.{{{}}}", fmt::join(names, ", ")));
}

// `attrs={"key": value}` of @pl.function: bool, int and str literals, and a split mode
// (`pl.SplitMode.UP_DOWN`), kept as its name.
ir::Result<std::map<std::string, ir::AttrValue>> ReadFunctionAttrs(py::handle node, const SourceMap& map) {
  if (!IsNode(node, "Dict"))
    return MakeError(DiagnosticKind::Syntax, "attrs= takes a dict literal", map.SpanOf(node));
  std::map<std::string, ir::AttrValue> attrs;
  py::list keys = node.attr("keys"), values = node.attr("values");
  for (size_t i = 0; i < py::len(keys); ++i) {
    py::handle key = keys[i], value = values[i];
    if (key.is_none() || !IsNode(key, "Constant") || !py::isinstance<py::str>(key.attr("value")))
      return MakeError(DiagnosticKind::Syntax, "function attribute names are string literals",
                       map.SpanOf(key.is_none() ? value : key));
    const std::string name = key.attr("value").cast<std::string>();
    if (attrs.contains(name))
      return MakeError(DiagnosticKind::Syntax, fmt::format("function attribute '{}' is given twice", name),
                       map.SpanOf(key));
    bool negative = false;
    py::handle literal = value;
    if (IsNode(value, "UnaryOp") && NodeType(value.attr("op")) == "USub") {
      negative = true;
      literal = value.attr("operand");
    }
    py::handle v = IsNode(literal, "Constant") ? literal.attr("value") : py::handle();
    const std::string dotted = DottedName(value);
    static const std::set<std::string> kSplitModes = {"pl.SplitMode.NONE", "pl.SplitMode.UP_DOWN",
                                                      "pl.SplitMode.LEFT_RIGHT"};
    if (kSplitModes.contains(dotted)) {
      attrs[name] = dotted.substr(std::string_view("pl.SplitMode.").size());
    } else if (v && py::isinstance<py::bool_>(v) && !negative) {
      attrs[name] = v.cast<bool>();
    } else if (v && py::isinstance<py::int_>(v) && !py::isinstance<py::bool_>(v)) {
      attrs[name] = negative ? -v.cast<int64_t>() : v.cast<int64_t>();
    } else if (v && py::isinstance<py::str>(v) && !negative) {
      attrs[name] = v.cast<std::string>();
    } else {
      return MakeError(DiagnosticKind::Type,
                       fmt::format("function attribute '{}' must be a bool, int or str literal, or a "
                                   "pl.SplitMode",
                                   name),
                       map.SpanOf(value));
    }
  }
  return attrs;
}

// `auto_scope=False` of @pl.function: whether the compiler opens the function's runtime scopes (a bool
// literal, as upstream reads it before the body, which it governs).
ir::Result<bool> ReadAutoScope(py::handle node, const SourceMap& map) {
  if (!IsNode(node, "Constant") || !py::isinstance<py::bool_>(node.attr("value")))
    return MakeError(DiagnosticKind::Type, "@pl.function(auto_scope=...) must be a bool literal (True or False)",
                     map.SpanOf(node), "write auto_scope=False to place the runtime scopes by hand");
  return node.attr("value").cast<bool>();
}

ir::Result<bool> ReadReturnTypes(py::handle returns, const SourceMap& map, const Constants* constants,
                                 Signature& signature) {
  if (returns.is_none()) return true;
  auto type = ResolveType(returns, map, constants);
  if (!type) return pypto::unexpected(type.error());
  if (const auto* tuple = (*type)->As<ir::TupleType>()) signature.return_types = tuple->elements();
  else if (!(*type)->As<ir::UnknownType>()) signature.return_types = {*type};
  return true;
}

// A generic method's parameters: names and directions, typed only when a call specialises it.
ir::Result<bool> ReadGenericParams(py::list args, const SourceMap& map, Signature& signature) {
  for (size_t i = 1; i < py::len(args); ++i) {
    py::handle arg = args[i];
    ir::ParamDirection direction = ir::ParamDirection::In;
    WithoutDirection(arg.attr("annotation"), &direction);
    signature.params.push_back(std::make_shared<ir::Var>(arg.attr("arg").cast<std::string>(),
                                                         std::make_shared<ir::UnknownType>(), map.SpanOf(arg)));
    signature.directions.push_back(direction);
  }
  return true;
}

}  // namespace

ir::Result<bool> ReadFunctionDecorator(py::handle def, const SourceMap& map,
                                       const std::map<std::string, std::string>& external_sources,
                                       Signature& signature) {
  py::handle external;  // the external_source= keyword's value, checked once type= is known
  bool found = false;
  for (auto decorator : def.attr("decorator_list")) {
    py::handle target = IsNode(decorator, "Call") ? decorator.attr("func") : decorator;
    const std::string name = DottedName(target);
    if (name != "pl.function")
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("unsupported decorator '{}' on function '{}'",
                                   name.empty() ? NodeType(target) : name, signature.name),
                       map.SpanOf(decorator), "the functions of a @pl.program are decorated with @pl.function(...)");
    if (found)
      return MakeError(DiagnosticKind::Syntax, fmt::format("function '{}' is decorated twice", signature.name),
                       map.SpanOf(decorator));
    found = true;
    if (!IsNode(decorator, "Call")) continue;
    if (py::len(decorator.attr("args")) > 0)
      return MakeError(DiagnosticKind::Syntax, "@pl.function takes keyword arguments: type=..., attrs=...",
                       map.SpanOf(decorator));
    for (auto keyword : decorator.attr("keywords")) {
      std::string key = keyword.attr("arg").is_none() ? "**" : keyword.attr("arg").cast<std::string>();
      py::handle value = keyword.attr("value");
      if (key == "type") {
        auto type = ReadFunctionType(value, map);
        if (!type) return pypto::unexpected(type.error());
        signature.type = *type;
      } else if (key == "attrs") {
        auto attrs = ReadFunctionAttrs(value, map);
        if (!attrs) return pypto::unexpected(attrs.error());
        signature.attrs.insert(attrs->begin(), attrs->end());
      } else if (key == "auto_scope") {
        auto auto_scope = ReadAutoScope(value, map);
        if (!auto_scope) return pypto::unexpected(auto_scope.error());
        signature.attrs[ir::kAutoScopeAttr] = *auto_scope;
      } else if (key == "external_source") {
        external = value;
      } else {
        return MakeError(DiagnosticKind::Syntax, fmt::format("@pl.function argument '{}' is not supported yet", key),
                         map.SpanOf(keyword));
      }
    }
  }
  if (!found)
    return MakeError(DiagnosticKind::Syntax, fmt::format("method '{}' is not a @pl.function", signature.name),
                     map.SpanOf(def), "decorate it with @pl.function(type=pl.FunctionType.<type>)");
  if (!external) return true;
  if (auto ok = CheckExternalType(signature.type, signature.name, map.SpanOf(external)); !ok)
    return pypto::unexpected(ok.error());
  auto evaluated = external_sources.find(signature.name);
  auto path = ReadExternalSource(external, evaluated == external_sources.end() ? nullptr : &evaluated->second, map,
                                 signature.name);
  if (!path) return pypto::unexpected(path.error());
  signature.attrs[kExternalSourceAttr] = *path;
  return true;
}

ir::Result<bool> ReadMethodSignature(py::handle def, const SourceMap& map, const Constants* constants,
                                     Signature& signature) {
  py::handle arguments = def.attr("args");
  if (py::len(arguments.attr("posonlyargs")) > 0 || py::len(arguments.attr("kwonlyargs")) > 0 ||
      !arguments.attr("vararg").is_none() || !arguments.attr("kwarg").is_none())
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("function '{}' may take only plain parameters (no /, *, *args or **kwargs)",
                                 signature.name),
                     map.SpanOf(def));
  if (py::len(arguments.attr("defaults")) > 0)
    return MakeError(DiagnosticKind::Syntax, "parameter default values are not supported",
                     map.SpanOf(py::list(arguments.attr("defaults"))[0]));
  py::list args = arguments.attr("args");
  if (py::len(args) == 0 || args[0].attr("arg").cast<std::string>() != "self")
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("function '{}' must take 'self' as its first parameter", signature.name),
                     py::len(args) == 0 ? map.SpanOf(def) : map.SpanOf(args[0]),
                     "functions of a @pl.program are methods: def f(self, ...); call them as self.f(...)");
  for (size_t i = 1; i < py::len(args); ++i) {
    py::handle arg = args[i];
    const std::string name = arg.attr("arg").cast<std::string>();
    if (arg.attr("annotation").is_none())
      return MakeError(DiagnosticKind::Type, fmt::format("parameter '{}' is missing a type annotation", name),
                       map.SpanOf(arg));
    signature.dynamic_dims.merge(DynamicDimsIn(arg.attr("annotation"), constants));
  }
  if (signature.generic()) return ReadGenericParams(args, map, signature);
  for (size_t i = 1; i < py::len(args); ++i) {
    py::handle arg = args[i];
    const std::string name = arg.attr("arg").cast<std::string>();
    auto resolved = ResolveDeclaredParam(arg.attr("annotation"), name, map, constants);
    if (!resolved) return pypto::unexpected(resolved.error());
    signature.params.push_back(std::make_shared<ir::Var>(name, resolved->type, map.SpanOf(arg)));
    signature.directions.push_back(resolved->direction);
  }
  return ReadReturnTypes(def.attr("returns"), map, constants, signature);
}

ir::Result<Signature> SpecialiseSignature(const Signature& generic, const std::string& name,
                                          const std::map<std::string, TensorSpec>& specs, const SourceMap& map,
                                          const Constants& constants, Constants& bound) {
  Signature specialised{.name = name, .def = generic.def, .type = generic.type, .attrs = generic.attrs};
  py::list args = generic.def.attr("args").attr("args");
  for (size_t i = 1; i < py::len(args); ++i) {
    py::handle arg = args[i];
    const std::string param = arg.attr("arg").cast<std::string>();
    // A parameter without dynamic dimensions is as declared; the call's usual checks apply to it.
    auto spec = specs.find(param);
    auto resolved = DynamicDimsIn(arg.attr("annotation"), &constants).empty()
                        ? ResolveDeclaredParam(arg.attr("annotation"), param, map, &constants)
                        : ResolveParam(arg.attr("annotation"), param, spec == specs.end() ? nullptr : &spec->second,
                                       map, &constants, &specialised.bindings, DynamicPolicy::PerParameter);
    if (!resolved) return pypto::unexpected(resolved.error());
    specialised.params.push_back(std::make_shared<ir::Var>(param, resolved->type, map.SpanOf(arg)));
    specialised.directions.push_back(resolved->direction);
  }
  bound = BindConstants(constants, specialised.bindings);
  py::handle returns = generic.def.attr("returns");
  // A dimension the parameters disagree on is still a DynamicDim in `bound`.
  for (const auto& dim : DynamicDimsIn(returns, &bound)) {
    auto it = specialised.bindings.find(dim);
    if (it != specialised.bindings.end()) {
      specialised.returns_from_body = true;
      return specialised;
    }
  }
  if (auto ok = ReadReturnTypes(returns, map, &bound, specialised); !ok) return pypto::unexpected(ok.error());
  return specialised;
}

std::set<std::string> CalledMethods(py::handle def) {
  std::set<std::string> called;
  for (py::handle node : py::module_::import("ast").attr("walk")(def)) {
    if (!IsNode(node, "Call")) continue;
    py::handle func = node.attr("func");
    if (IsNode(func, "Attribute") && DottedName(func.attr("value")) == "self")
      called.insert(func.attr("attr").cast<std::string>());
  }
  return called;
}

std::string ChooseEntry(const std::vector<ir::FunctionPtr>& functions) {
  struct Callees final : ir::IRVisitor {
    std::set<std::string> names;
    void VisitCall(const std::shared_ptr<const ir::Call>& call) override {
      if (!call->is_op_call()) names.insert(call->callee());
      IRVisitor::VisitCall(call);
    }
  } callees;
  for (const auto& function : functions) callees.VisitStmt(function->body());
  const ir::Function* first_uncalled = nullptr;
  for (const auto& function : functions) {
    if (callees.names.contains(function->name())) continue;
    if (function->type() == ir::FunctionType::Opaque || function->type() == ir::FunctionType::Orchestration)
      return function->name();
    if (!first_uncalled) first_uncalled = function.get();
  }
  return first_uncalled ? first_uncalled->name() : functions.front()->name();
}

}  // namespace pypto::frontend
