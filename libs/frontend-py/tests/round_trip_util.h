// The printer/parser round trip: print a program as `@pl.program` text, parse that text back with
// ParseProgram, and require the same text and a structurally equal program.
#pragma once

#include <string>

#include "pypto/frontend/parser.h"
#include "pypto/ir/printer.h"
#include "pypto/ir/structural_equal.h"
#include "pypto/passes/pipeline.h"

namespace pypto::frontend::testing {

// Parses printed program text (a `@pl.program` class) as if it were the file `filename`.
inline ir::Result<ir::ProgramPtr> ParseProgramText(const std::string& text, const std::string& filename = "<printed>",
                                                   int line_offset = 0) {
  return ParseProgram(ProgramRequest{.source = text, .filename = filename, .line_offset = line_offset});
}

// "" when `program` survives print -> parse -> print with identical text and a structurally equal
// program; otherwise what went wrong, with the text. Requires the GIL.
inline std::string RoundTripFailure(const ir::Program& program) {
  const std::string text = ir::PrintProgram(program);
  auto reparsed = ParseProgramText(text);
  if (!reparsed) return "re-parsing the printed program failed: " + reparsed.error().str() + "\n" + text;
  const std::string again = ir::PrintProgram(**reparsed);
  if (again != text) return "the re-parsed program prints differently:\n" + text + "---\n" + again;
  if (auto diff = ir::StructuralDiff(program, **reparsed))
    return "the re-parsed program is not structurally equal: " + *diff + "\n" + text;
  return "";
}

// The program lowered by the default pipeline for Ascend910B (tiles placed, call directions derived).
inline ir::Result<ir::ProgramPtr> LowerForTest(const ir::ProgramPtr& program,
                                               const ir::SocSpec& soc = ir::Ascend910B()) {
  return passes::Lower(program, passes::PassContext{.soc = &soc});
}

}  // namespace pypto::frontend::testing
