// The frontend's entry points: a `@pl.jit` function or a `@pl.program` class -> a program. Each function
// body is parsed by FunctionParser (function_parser.h, the parse_*.cpp files); this file reads the
// sources, specialises generic methods, and puts the parsed functions together into the program.
#include "pypto/frontend/parser.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "function_parser.h"
#include "group_members.h"
#include "source_limits.h"
#include "module_functions.h"
#include "program_signature.h"
#include "result_binding.h"
#include "syncall_launch_check.h"

namespace pypto::frontend {

using ir::DiagnosticKind;
using ir::MakeError;

ir::Result<py::object> ParseDef(const std::string& source, const SourceMap& map) {
  py::object module = py::module_::import("ast").attr("parse")(source, map.filename);
  if (auto ok = CheckSourceLimits(module, map); !ok) return pypto::unexpected(ok.error());
  py::list body = module.attr("body");
  if (py::len(body) != 1 || !IsNode(body[0], "FunctionDef"))
    return MakeError(DiagnosticKind::Syntax, "expected exactly one function definition",
                     ir::Span{map.filename, map.line_offset + 1, 1});
  return py::object(body[0]);
}

namespace {

// What needs the whole program, run once its functions are put together: launches of hard syncalls,
// what each Group's members are written in, and the warnings on hand-written kernels' results.
ir::Result<bool> CheckAssembledProgram(const ir::Program& program) {
  if (auto ok = CheckHardSyncallLaunches(program); !ok) return ok;
  if (auto ok = CheckGroupMembers(program); !ok) return ok;
  WarnOnMisboundDeclarations(program);
  return true;
}

}  // namespace

// ---- @pl.program classes ------------------------------------------------------------------------

namespace {

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

}  // namespace

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

namespace {

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
  if (auto ok = CheckSourceLimits(module, map); !ok) return pypto::unexpected(ok.error());
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
  if (auto ok = CheckAssembledProgram(*program_ir); !ok) return pypto::unexpected(ok.error());
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
    if (!request.auto_scope) entry_source.attrs[ir::kAutoScopeAttr] = false;
    program.names.insert(entry_source.name);
    auto entry = FunctionParser(program, entry_source).Parse();
    if (!entry) return pypto::unexpected(entry.error());
    std::vector<ir::FunctionPtr> functions = program.kernels;
    functions.insert(functions.begin(), *entry);
    std::string program_name = request.program_name.empty() ? "_jit_" + (*entry)->name() : request.program_name;
    auto parsed = std::make_shared<ir::Program>(program_name, std::move(functions), (*entry)->name());
    if (auto ok = CheckAssembledProgram(*parsed); !ok) return pypto::unexpected(ok.error());
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
