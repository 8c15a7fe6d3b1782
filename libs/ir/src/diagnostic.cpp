#include "pypto/ir/diagnostic.h"

#include <fmt/format.h>

namespace pypto::ir {

std::string Span::str() const {
  if (!known()) return file.empty() ? "<unknown>" : file;
  return fmt::format("{}:{}:{}", file, line, column);
}

const char* DiagnosticKindName(DiagnosticKind kind) {
  switch (kind) {
    case DiagnosticKind::Syntax: return "syntax error";
    case DiagnosticKind::Type: return "type error";
    case DiagnosticKind::UndefinedName: return "undefined name";
    case DiagnosticKind::UnknownOperation: return "unknown operation";
    case DiagnosticKind::InvalidOperation: return "invalid operation";
    case DiagnosticKind::Resource: return "resource error";
    case DiagnosticKind::Internal: return "internal error";
  }
  return "error";
}

std::string Diagnostic::str() const {
  std::string text = fmt::format("{}: error: {}", span.str(), message);
  if (!hint.empty()) text += fmt::format("\n  help: {}", hint);
  return text;
}

}  // namespace pypto::ir
