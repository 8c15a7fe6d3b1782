#include "result_binding.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "ast_node.h"
#include "external_decl.h"
#include "group_members.h"

namespace pypto::frontend {

namespace {

// The first pl.Out parameter after a returned pl.InOut one: the output the caller most likely means.
std::optional<size_t> LaterOut(const ReturnedParam& result) {
  if (result.directions[result.returned] != ir::ParamDirection::InOut) return std::nullopt;
  for (size_t i = result.returned + 1; i < result.directions.size(); ++i)
    if (result.directions[i] == ir::ParamDirection::Out) return i;
  return std::nullopt;
}

std::vector<std::string> ParamNames(const ir::Function& function) {
  std::vector<std::string> names;
  for (const auto& param : function.params()) names.push_back(param->name_hint());
  return names;
}

// The variable an argument names, if it is one.
const ir::Var* ArgVar(const ir::Call& call, size_t i) { return call.args()[i]->As<ir::Var>(); }

std::string Quoted(const ir::Var* var, const char* otherwise) {
  return var ? fmt::format("'{}'", var->name_hint()) : otherwise;
}

// A Group is hand-written when every member is; a mixed one is refused (group_members.h).
bool IsHandWrittenGroup(ir::FunctionType type, const std::vector<std::string>& members,
                        const IsExternalName& is_external) {
  return type == ir::FunctionType::Group && !members.empty() &&
         std::ranges::all_of(members, [&](const auto& name) { return is_external(name); });
}

}  // namespace

std::optional<ReturnedParam> HandWrittenResult(const std::string& kernel, const std::vector<std::string>& params,
                                               const std::vector<ir::ParamDirection>& directions,
                                               size_t declared_returns, ir::FunctionType type, bool external,
                                               const std::vector<std::string>& members,
                                               const IsExternalName& is_external) {
  if ((!external && !IsHandWrittenGroup(type, members, is_external)) || declared_returns != 1) return std::nullopt;
  const auto returned = ir::FirstOutputParam(directions);
  if (!returned) return std::nullopt;
  return ReturnedParam{.kernel = kernel, .params = params, .directions = directions, .returned = *returned};
}

std::optional<ReturnedParam> HandWrittenResult(const ir::Function& function, const IsExternalName& is_external) {
  return HandWrittenResult(function.name(), ParamNames(function), function.param_directions(),
                           function.return_types().size(), function.type(), IsExternal(function.attrs()),
                           GroupMembers(function), is_external);
}

std::optional<std::string> DeclarationBindingWarning(const ReturnedParam& result) {
  const auto out = LaterOut(result);
  if (!out) return std::nullopt;
  const std::string& returned = result.params[result.returned];
  const std::string& intended = result.params[*out];
  return fmt::format(
      "hand-written kernel '{0}' returns its first pl.Out/pl.InOut parameter: the pl.InOut parameter '{1}', not "
      "the pl.Out parameter '{2}' after it, so `x = {0}(...)` binds '{1}'; declare '{2}' before '{1}' so that the "
      "result is '{2}'",
      result.kernel, returned, intended);
}

std::optional<std::string> CallBindingWarning(const ReturnedParam& result, const ir::Call& call,
                                              const std::string& target) {
  const auto& directions = result.directions;
  if (call.args().size() != directions.size()) return std::nullopt;
  const ir::Var* bound = ArgVar(call, result.returned);
  if (bound && bound->name_hint() == target) return std::nullopt;  // `query = pa(query, out)` says what it gets
  if (const auto out = LaterOut(result))
    return fmt::format(
        "`{0} = {1}(...)` binds '{0}' to {2} (pl.InOut parameter '{3}'), not to {4} (pl.Out parameter '{5}'): a "
        "hand-written kernel returns its first pl.Out/pl.InOut parameter; declare '{5}' before '{3}' in '{1}' so "
        "that the result is '{5}'",
        target, result.kernel, Quoted(bound, "the argument"), result.params[result.returned],
        Quoted(ArgVar(call, *out), "the argument"), result.params[*out]);
  for (size_t i = 0; i < directions.size(); ++i) {
    const ir::Var* other = ArgVar(call, i);
    if (i == result.returned || directions[i] == ir::ParamDirection::In || !other || other->name_hint() != target)
      continue;
    return fmt::format(
        "`{0} = {1}(...)`: a hand-written kernel returns its first pl.Out/pl.InOut parameter, so the result of "
        "'{1}' is its parameter '{2}' (the argument '{3}'), not '{0}'; put the intended output first in the "
        "declaration, or assign the result to '{3}'",
        target, result.kernel, result.params[result.returned], bound ? bound->name_hint() : "?");
  }
  return std::nullopt;
}

void WarnAt(const ir::Span& span, const std::string& message) {
  if (PyErr_WarnEx(PyExc_UserWarning, fmt::format("{}: {}", span.str(), message).c_str(), 1) != 0)
    throw py::error_already_set();  // warnings turned into errors
}

void WarnOnMisboundDeclarations(const ir::Program& program) {
  auto is_external = [&](const std::string& name) {
    auto function = program.Find(name);
    return function && IsExternal(function->attrs());
  };
  // The members of a hand-written Group are declared for it: the Group is what calls bind.
  std::set<std::string> members;
  for (const auto& function : program.functions()) {
    auto callees = GroupMembers(*function);
    if (IsHandWrittenGroup(function->type(), callees, is_external)) members.insert(callees.begin(), callees.end());
  }
  std::set<std::string> warned;  // spans: a declaration specialised twice is one declaration
  for (const auto& function : program.functions()) {
    if (members.contains(function->name())) continue;
    auto result = HandWrittenResult(*function, is_external);
    if (!result) continue;
    auto warning = DeclarationBindingWarning(*result);
    if (warning && warned.insert(function->span().str()).second) WarnAt(function->span(), *warning);
  }
}

}  // namespace pypto::frontend
