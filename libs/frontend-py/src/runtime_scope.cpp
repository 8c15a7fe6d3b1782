#include "runtime_scope.h"

#include <fmt/format.h>

namespace pypto::frontend {
namespace {

using ir::DiagnosticKind;
using ir::MakeError;

// pl.scope(mode=...): MANUAL or AUTO, written pl.ScopeMode.X.
ir::Result<bool> ScopeModeIsManual(py::handle context, const SourceMap& map) {
  if (py::len(context.attr("args")) > 0)
    return MakeError(DiagnosticKind::Syntax, "pl.scope takes its mode by keyword", map.SpanOf(context),
                     "write `with pl.scope(mode=pl.ScopeMode.MANUAL):`");
  bool manual = false;
  for (auto keyword : context.attr("keywords")) {
    const std::string key = keyword.attr("arg").is_none() ? "**" : keyword.attr("arg").cast<std::string>();
    py::handle value = keyword.attr("value");
    if (key != "mode")
      return MakeError(DiagnosticKind::Syntax, fmt::format("pl.scope has no argument '{}'", key), map.SpanOf(value),
                       "pl.scope takes only mode=pl.ScopeMode.AUTO or mode=pl.ScopeMode.MANUAL");
    const std::string mode = DottedName(value);
    if (mode != "pl.ScopeMode.MANUAL" && mode != "pl.ScopeMode.AUTO")
      return MakeError(DiagnosticKind::Syntax,
                       fmt::format("unknown scope mode '{}'", mode.empty() ? NodeType(value) : mode),
                       map.SpanOf(value), "use pl.ScopeMode.AUTO or pl.ScopeMode.MANUAL");
    manual = mode == "pl.ScopeMode.MANUAL";
  }
  return manual;
}

ir::Result<bool> CheckPlace(bool manual, const RuntimeScopePlace& place, const std::string& spelling,
                            const ir::Span& span) {
  if (place.in_kernel)
    return MakeError(DiagnosticKind::Syntax, fmt::format("{} cannot appear inside a kernel", spelling), span,
                     "runtime scopes order the launches of orchestration code; open it around the pl.at scopes "
                     "or kernel calls instead");
  if (!place.in_manual_scope) return true;
  if (manual)
    return MakeError(DiagnosticKind::Syntax, fmt::format("{} cannot be nested inside another manual scope", spelling),
                     span, "a manual scope already covers everything inside it; remove the inner one");
  return MakeError(DiagnosticKind::Syntax, fmt::format("an AUTO scope ({}) cannot be nested inside a manual scope",
                                                       spelling),
                   span, "end the manual scope first, or order these launches with deps= instead");
}

}  // namespace

bool IsRuntimeScope(py::handle context) {
  if (!IsNode(context, "Call")) return false;
  const std::string name = DottedName(context.attr("func"));
  return name == "pl.manual_scope" || name == "pl.scope";
}

ir::Result<bool> ReadRuntimeScope(py::handle context, py::handle target, const RuntimeScopePlace& place,
                                  const SourceMap& map) {
  const std::string name = DottedName(context.attr("func"));
  bool manual = true;
  if (name == "pl.manual_scope") {
    if (py::len(context.attr("args")) > 0 || py::len(context.attr("keywords")) > 0)
      return MakeError(DiagnosticKind::Syntax, "pl.manual_scope() takes no arguments", map.SpanOf(context));
  } else {
    auto mode = ScopeModeIsManual(context, map);
    if (!mode) return mode;
    manual = *mode;
  }
  if (!target.is_none())
    return MakeError(DiagnosticKind::Syntax, fmt::format("{}() binds no name", name), map.SpanOf(target),
                     "remove the `as ...`; launches inside bind their TaskIds with `as tid` or pl.submit");
  const char* spelling = name == "pl.manual_scope" ? "pl.manual_scope()"
                         : manual                  ? "pl.scope(mode=pl.ScopeMode.MANUAL)"
                                                   : "pl.scope()";
  if (auto ok = CheckPlace(manual, place, spelling, map.SpanOf(context)); !ok) return ok;
  return manual;
}

}  // namespace pypto::frontend
