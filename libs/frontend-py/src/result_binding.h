// The single-return trap of hand-written kernels. A hand-written kernel (an external AIC/AIV
// declaration, or a Group of them) with one declared return returns its first pl.Out/pl.InOut
// parameter, whatever the call assigns it to. When a pl.InOut parameter comes before a pl.Out one,
// `attn_out = pa(query, out)` therefore names `query`, not `out`: every later reader of `attn_out`
// reads the (modified) input, and nothing fails. The frontend warns at the declaration and at each
// call that binds the result to another name.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "pypto/ir/diagnostic.h"
#include "pypto/ir/expr.h"
#include "pypto/ir/function.h"
#include "pypto/ir/program.h"

namespace pypto::frontend {

// What a call of a hand-written kernel returns: parameter `returned`, its first output-like one.
struct ReturnedParam {
  std::string kernel;
  std::vector<std::string> params;
  std::vector<ir::ParamDirection> directions;
  size_t returned = 0;
};

// Whether the function named so is a hand-written declaration (carries external_source).
using IsExternalName = std::function<bool(const std::string&)>;

// The returned parameter of `function` when it is a hand-written kernel with one declared return: an
// external declaration, or a Group all of whose members are external. Nothing for anything else.
std::optional<ReturnedParam> HandWrittenResult(const ir::Function& function, const IsExternalName& is_external);

// The same from a kernel's declared parts (a @pl.program method's signature, before its body is parsed):
// `members` are the functions a Group's body calls.
std::optional<ReturnedParam> HandWrittenResult(const std::string& kernel, const std::vector<std::string>& params,
                                               const std::vector<ir::ParamDirection>& directions,
                                               size_t declared_returns, ir::FunctionType type, bool external,
                                               const std::vector<std::string>& members,
                                               const IsExternalName& is_external);

// The declaration's warning when its returned parameter is a pl.InOut followed by a pl.Out one.
std::optional<std::string> DeclarationBindingWarning(const ReturnedParam& result);

// `target = kernel(...)` (`call`): a warning when `target` names something other than the returned
// argument and either the kernel declares a pl.InOut before a pl.Out, or `target` is the name of
// another output argument of the call.
std::optional<std::string> CallBindingWarning(const ReturnedParam& result, const ir::Call& call,
                                              const std::string& target);

// Issues `message` at `span` as a Python UserWarning; throws py::error_already_set when warnings are
// turned into errors.
void WarnAt(const ir::Span& span, const std::string& message);

// Warns at each hand-written kernel of `program` that declares a pl.InOut before a pl.Out: at a Group,
// not again at its members; once per declaration however many specialisations it has.
void WarnOnMisboundDeclarations(const ir::Program& program);

}  // namespace pypto::frontend
