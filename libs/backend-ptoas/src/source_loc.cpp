#include "source_loc.h"

#include <fmt/format.h>

namespace pypto::backend_ptoas {
namespace {

std::string EscapeMlirString(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string LocSuffix(const ir::Span& span) {
  if (!span.known() || span.file.empty()) return "";
  // MLIR's FileLineColLoc has no "unknown column"; column 1 still names the right line.
  return fmt::format(" loc(\"{}\":{}:{})", EscapeMlirString(span.file), span.line, span.column > 0 ? span.column : 1);
}

const ir::Span& OpSpan(const ir::Span& stmt, const ir::Span& call) {
  if (!call.known()) return stmt;
  if (!stmt.known()) return call;
  const bool nested = call.file == stmt.file && call.line == stmt.line && call.column >= stmt.column;
  return nested ? call : stmt;
}

}  // namespace pypto::backend_ptoas
