// Orchestration codegen of DSL snippets in tests: parse, lower and generate, keeping the lowered
// program alive beside the orchestration (a deferred plan points into it). Apart from
// frontend_test_util.h so that the parser's tests do not include codegen-orch.
#pragma once

#include <utility>

#include "frontend_test_util.h"
#include "pypto/codegen_orch/orchestration.h"

namespace pypto::frontend::testing {

struct GeneratedOrchestration {
  ir::ProgramPtr lowered;
  codegen_orch::Orchestration orchestration;
};

// The lowered program and its orchestration, or the rendered diagnostic of the step that failed.
inline ir::Result<GeneratedOrchestration> GenerateForTest(const ParseRequest& request) {
  EnsureInterpreter();
  pybind11::gil_scoped_acquire gil;
  auto program = ParseJitFunction(request);
  if (!program) return pypto::unexpected(program.error());
  auto lowered = LowerForTest(*program);
  if (!lowered) return pypto::unexpected(lowered.error());
  auto orchestration = codegen_orch::GenerateOrchestration(**lowered);
  if (!orchestration) return pypto::unexpected(orchestration.error());
  return GeneratedOrchestration{*lowered, std::move(*orchestration)};
}

}  // namespace pypto::frontend::testing
