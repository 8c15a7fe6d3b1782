#include "external_decl.h"

#include <fmt/format.h>

#include "pypto/backend_extern/source_paths.h"

namespace pypto::frontend {

using ir::DiagnosticKind;
using ir::MakeError;

ir::Result<std::string> ReadExternalSource(py::handle value, const std::string* evaluated, const SourceMap& map,
                                           const std::string& function) {
  std::string written;
  if (evaluated) {
    written = *evaluated;
  } else if (IsNode(value, "Constant") && py::isinstance<py::str>(value.attr("value"))) {
    written = value.attr("value").cast<std::string>();
  } else {
    return MakeError(DiagnosticKind::Syntax,
                     fmt::format("external_source of '{}' must be a path (a str or pathlib.Path)", function),
                     map.SpanOf(value));
  }
  auto resolved = backend_extern::ResolveSource(written, map.filename);
  if (!resolved)
    return MakeError(DiagnosticKind::Type, fmt::format("external_source of '{}': {}", function, resolved.error()),
                     map.SpanOf(value));
  return resolved->string();
}

ir::Result<bool> CheckExternalType(ir::FunctionType type, const std::string& function, const ir::Span& span) {
  if (type == ir::FunctionType::AIC || type == ir::FunctionType::AIV) return true;
  return MakeError(DiagnosticKind::Type,
                   fmt::format("external_source is allowed only on AIC or AIV functions; '{}' is {}", function,
                               ir::FunctionTypeName(type)),
                   span, "declare it with @pl.function(type=pl.FunctionType.AIV, external_source=...)");
}

ir::Result<bool> CheckSignatureOnlyBody(py::handle def, const SourceMap& map, const std::string& function) {
  py::list body = def.attr("body");
  size_t first = 0;
  auto is_constant_expr = [](py::handle stmt) { return IsNode(stmt, "Expr") && IsNode(stmt.attr("value"), "Constant"); };
  if (py::len(body) > 1 && is_constant_expr(body[0]) && py::isinstance<py::str>(body[0].attr("value").attr("value")))
    first = 1;  // the docstring
  const bool ellipsis = py::len(body) == first + 1 && is_constant_expr(body[first]) &&
                        py::object(body[first].attr("value").attr("value")).ptr() == Py_Ellipsis;
  if (ellipsis) return true;
  return MakeError(DiagnosticKind::Syntax,
                   fmt::format("external function '{}' has a body; its implementation is the external source", function),
                   map.SpanOf(body[first]), "write the body as `...`");
}

bool IsExternal(const std::map<std::string, ir::AttrValue>& attrs) { return attrs.contains(kExternalSourceAttr); }

}  // namespace pypto::frontend
