// Errors reported to users: a message anchored at a source span, plus optional help.
#pragma once

#include <string>

#include "pypto/ir/span.h"
#include "pypto/support/expected.h"

namespace pypto::ir {

enum class DiagnosticKind {
  Syntax,            // a construct the DSL does not accept
  Type,              // a wrong type, shape or dtype
  UndefinedName,     // a name with no definition in scope
  UnknownOperation,  // pl.<name> that is not an op
  InvalidOperation,  // an op called with arguments it rejects
  Resource,          // a kernel that does not fit the chip
  Internal,          // a bug in the toolchain
};

struct Diagnostic {
  DiagnosticKind kind = DiagnosticKind::Internal;
  std::string message;
  Span span;
  std::string hint;

  // "file:line:col: error: message" followed by the help line when there is one.
  std::string str() const;
};

const char* DiagnosticKindName(DiagnosticKind kind);

template <typename T>
using Result = pypto::expected<T, Diagnostic>;

inline pypto::unexpected<Diagnostic> MakeError(DiagnosticKind kind, std::string message, Span span = {},
                                               std::string hint = {}) {
  return pypto::unexpected<Diagnostic>(Diagnostic{kind, std::move(message), std::move(span), std::move(hint)});
}

}  // namespace pypto::ir
