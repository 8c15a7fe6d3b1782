// FunctionParser: calls of the program's own functions: @pl.jit.incore and extern kernels
// specialised per call, a @pl.program's methods (self.f(...)), and their arguments and results.
#include "function_parser.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "external_decl.h"
#include "pypto/ir/functor.h"
#include "pypto/ir/tensor_aliases.h"
#include "program_signature.h"
#include "result_binding.h"

namespace pypto::frontend {

using ir::DiagnosticKind;
using ir::MakeError;

// The @pl.jit.incore (or extern) function a JIT call names: `kernel`, or `self.kernel` as upstream's
// JIT lets model code write it (it makes each such function a method of the program it generates).
std::string FunctionParser::JitFunctionName(const std::string& callee) const {
  if (callee.starts_with("self.") && program_.request->functions.contains(callee.substr(5))) return callee.substr(5);
  return callee;
}

// `a, b = self.k(x, a, b)`: a function of the program that returns several tensors writes them
// into its output parameters (it returns its pl.Out / pl.InOut parameters in order), so the call
// is a statement and each name means the argument passed for the corresponding output. A @pl.jit
// kernel's outputs are the parameters its return statement names (ReturnedParams).
ir::Result<ir::StmtPtr> FunctionParser::ParseMultiResultCall(py::handle stmt, py::handle target) {
  const ir::Span span = map_.SpanOf(stmt);
  auto value = ParseExpr(stmt.attr("value"));
  if (!value) return pypto::unexpected(value.error());
  const auto* call = (*value)->As<ir::Call>();
  const auto* tuple = (*value)->type()->As<ir::TupleType>();
  const Signature* callee = nullptr;
  if (call && !call->is_op_call() && program_.methods)
    if (auto it = program_.methods->find(call->callee()); it != program_.methods->end()) callee = &it->second;
  std::optional<std::vector<size_t>> outputs;
  if (callee) {
    outputs.emplace();
    for (size_t i = 0; i < callee->directions.size(); ++i)
      if (callee->directions[i] != ir::ParamDirection::In) outputs->push_back(i);
  } else if (call && !call->is_op_call() && !program_.methods) {
    outputs = ReturnedParams(call->callee());
  }
  if (!tuple || !outputs)
    return MakeError(DiagnosticKind::Syntax,
                     "several names are assigned the results of a call to a function of the program that returns "
                     "several tensors",
                     map_.SpanOf(target));
  py::list names = target.attr("elts");
  if (outputs->size() != py::len(names) || tuple->elements().size() != py::len(names))
    return MakeError(DiagnosticKind::Type,
                     fmt::format("{}() returns {} tensors through {} output parameters, assigned to {} names",
                                 call->callee(), tuple->elements().size(), outputs->size(), py::len(names)),
                     map_.SpanOf(target));
  for (size_t k = 0; k < outputs->size(); ++k) {
    const auto& arg = call->args()[(*outputs)[k]];
    auto var = std::dynamic_pointer_cast<const ir::Var>(arg);
    if (!IsNode(names[k], "Name") || !var || !tuple->elements()[k]->equals(*var->type()))
      return MakeError(DiagnosticKind::Type,
                       fmt::format("result {} of {}() is its output parameter '{}', so it is assigned a plain "
                                   "name and has that argument's type ({})",
                                   k, call->callee(), ParamName(call->callee(), (*outputs)[k]),
                                   tuple->elements()[k]->str()),
                       map_.SpanOf(names[k]));
    const std::string name = names[k].attr("id").cast<std::string>();
    env_[name] = std::const_pointer_cast<ir::Var>(var);
    unavailable_.erase(name);
    assigned_types_[name] = var->type();
  }
  return ir::StmtPtr(std::make_shared<ir::EvalStmt>(*value, span));
}

// For each of `values` a function with `params` and `body` returns, the parameter it is or updates in
// place (`group_out = pl.store(..., group_out)`, `signal = pld.tensor.barrier(signal)`); nullopt for a
// value that is neither.
std::vector<std::optional<size_t>> FunctionParser::ReturnedParamIndices(const ir::StmtPtr& body,
                                                                        const std::vector<ir::VarPtr>& params,
                                                                        const std::vector<ir::ExprPtr>& values) {
  const ir::TensorAliases aliases(body);
  std::vector<std::optional<size_t>> indices;
  for (const auto& value : values) {
    const auto* var = value->As<ir::Var>();
    const ir::Var* root = var ? aliases.Root(var) : nullptr;
    auto param = std::ranges::find_if(params, [&](const ir::VarPtr& p) { return p.get() == root; });
    indices.push_back(param == params.end() ? std::nullopt
                                            : std::optional<size_t>(static_cast<size_t>(param - params.begin())));
  }
  return indices;
}

// The parameters a @pl.jit kernel (already parsed) returns, in order; nothing when a returned value
// is none of them.
std::optional<std::vector<size_t>> FunctionParser::ReturnedParams(const std::string& kernel) const {
  auto it = std::ranges::find_if(program_.kernels, [&](const ir::FunctionPtr& f) { return f->name() == kernel; });
  if (it == program_.kernels.end() || !(*it)->body()) return std::nullopt;
  const ir::Function& function = **it;
  const ir::ReturnStmt* ret = nullptr;
  for (const auto& stmt : ir::FlattenStmts(function.body()))
    if (const auto* r = stmt->As<ir::ReturnStmt>()) ret = r;
  if (!ret) return std::nullopt;
  std::vector<size_t> params;
  for (const auto& index : ReturnedParamIndices(function.body(), function.params(), ret->values())) {
    if (!index) return std::nullopt;
    params.push_back(*index);
  }
  return params;
}

// The name of parameter `index` of the program function `name` (a method or a parsed kernel).
std::string FunctionParser::ParamName(const std::string& name, size_t index) const {
  if (program_.methods)
    if (auto it = program_.methods->find(name); it != program_.methods->end() && index < it->second.params.size())
      return it->second.params[index]->name_hint();
  for (const auto& kernel : program_.kernels)
    if (kernel->name() == name && index < kernel->params().size()) return kernel->params()[index]->name_hint();
  return "?";
}

// The positional arguments of a call to function `name`, into args[0], args[1], ...
ir::Result<bool> FunctionParser::ParsePositionalArgs(const std::string& name, py::handle node,
                                                     std::vector<ir::ExprPtr>& args, const ir::Span& span) {
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
ir::Result<bool> FunctionParser::ParseKeywordArg(const std::string& name, py::handle keyword, size_t index,
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

ir::Result<FunctionParser::SubFunctionCall> FunctionParser::ParseSubFunctionCall(const std::string& name,
                                                                                 py::handle node) {
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
ir::Result<ir::ExprPtr> FunctionParser::ParseKernelCall(const std::string& name, py::handle node) {
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
  // An orchestration slice passed for a tensor parameter (`w = pl.slice(ws, [1, D], [layer, 0])`,
  // then `ext(out, w)`) is a view of its window, as for an inline helper: the kernel is specialised
  // on the view's tensor type and reads the tensor's elements in place.
  if (auto ok = PassSlicesAsViews(call->source.def, args); !ok) return pypto::unexpected(ok.error());
  for (size_t i = 0; i < args.size(); ++i)
    if (const auto* tensor = args[i]->type()->As<ir::TensorType>())
      call->source.tensor_specs[call->param_names[i]] = TensorSpec{tensor->shape(), tensor->dtype()};
  std::vector<std::string> key_parts;
  for (const auto& arg : args) key_parts.push_back(arg->type()->str());
  const std::string types = fmt::format("{}", fmt::join(key_parts, ", "));
  auto kernel = sub.form == "extern" ? SpecialiseExtern(name, sub, call->source, types, span)
                                     : Specialise(call->source, fmt::format("{}({})", name, types), span);
  if (!kernel) return pypto::unexpected(kernel.error());
  if (auto ok = CheckKernelArgs(**kernel, args, call->param_names, span); !ok) return pypto::unexpected(ok.error());
  if (auto ok = ExtentArgs(**kernel, call->param_names, args, span); !ok) return pypto::unexpected(ok.error());
  const auto& returns = (*kernel)->return_types();
  ir::TypePtr type = returns.size() == 1 ? returns[0]
                     : returns.empty()   ? ir::TypePtr(std::make_shared<ir::UnknownType>())
                                         : ir::TypePtr(std::make_shared<ir::TupleType>(returns));
  return ir::ExprPtr(std::make_shared<ir::Call>((*kernel)->name(), std::move(args), type, span));
}

// `self.f(a, b[, attrs={"arg_directions": [...]}])`: a call to another function of the @pl.program.
ir::Result<ir::ExprPtr> FunctionParser::ParseMethodCall(const std::string& name, py::handle node) {
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
std::map<std::string, TensorSpec> FunctionParser::SpecsOf(const Signature& callee,
                                                          const std::vector<ir::ExprPtr>& args) {
  std::map<std::string, TensorSpec> specs;
  for (size_t i = 0; i < args.size(); ++i)
    if (const auto* tensor = args[i]->type()->As<ir::TensorType>())
      specs[callee.params[i]->name_hint()] = TensorSpec{tensor->shape(), tensor->dtype()};
  return specs;
}

// `attrs={"arg_directions": ["Input", "OutputExisting", ...]}` (or pl.adir.input, ...): how each
// argument is passed, as DeriveCallDirections writes it.
ir::Result<std::vector<ir::ArgDirection>> FunctionParser::ParseCallAttrs(py::handle node) {
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

std::optional<ir::ArgDirection> FunctionParser::ArgDirectionOf(py::handle node) {
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
ir::Result<ir::FunctionPtr> FunctionParser::Specialise(FunctionSource source, const std::string& key,
                                                       const ir::Span& span) {
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

// `target = kernel(...)` where `kernel` is hand-written: the result is its first pl.Out/pl.InOut
// parameter whatever `target` is (result_binding.h). A @pl.jit program's kernels are parsed before the
// call; a @pl.program method may not be yet, so there its declared signature speaks for it.
void FunctionParser::WarnOnMisboundResult(const ir::Expr& value, const std::string& target, const ir::Span& span) {
  const auto* call = value.As<ir::Call>();
  // Inside a Group, `r = self.member(...)` is the group's own return, which its declaration answers for.
  if (!call || call->is_op_call() || source_.type == ir::FunctionType::Group) return;
  std::optional<ReturnedParam> result;
  if (program_.methods) {
    auto is_external = [&](const std::string& name) {
      auto method = program_.methods->find(name);
      return method != program_.methods->end() && IsExternal(method->second.attrs);
    };
    auto method = program_.methods->find(call->callee());
    if (method == program_.methods->end()) return;
    const Signature& callee = method->second;
    std::vector<std::string> params;
    for (const auto& param : callee.params) params.push_back(param->name_hint());
    const auto members = CalledMethods(callee.def);
    result = HandWrittenResult(callee.name, params, callee.directions, callee.return_types.size(), callee.type,
                               IsExternal(callee.attrs), {members.begin(), members.end()}, is_external);
  } else {
    auto find = [&](const std::string& name) {
      auto it = std::ranges::find_if(program_.kernels, [&](const ir::FunctionPtr& f) { return f->name() == name; });
      return it == program_.kernels.end() ? nullptr : it->get();
    };
    auto is_external = [&](const std::string& name) {
      const ir::Function* function = find(name);
      return function && IsExternal(function->attrs());
    };
    if (const ir::Function* callee = find(call->callee())) result = HandWrittenResult(*callee, is_external);
  }
  if (!result) return;
  if (auto warning = CallBindingWarning(*result, *call, target)) WarnAt(span, *warning);
}

// A @pl.jit.extern stub at a call with argument types `types`: one AIC or AIV declaration, or for a
// mixed kernel `<name>_aic` + `<name>_aiv` and the Group `<name>` that calls both.
ir::Result<ir::FunctionPtr> FunctionParser::SpecialiseExtern(const std::string& name, const SubFunction& sub,
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
ir::Result<bool> FunctionParser::CheckKernelArgs(const ir::Function& kernel, const std::vector<ir::ExprPtr>& args,
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

}  // namespace pypto::frontend
