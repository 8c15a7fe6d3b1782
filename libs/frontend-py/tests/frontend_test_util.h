// Parsing DSL snippets in tests through the C++ API, with the embedded interpreter started once.
#pragma once

#include <gtest/gtest.h>
#include <pybind11/embed.h>

#include <map>
#include <string>

#include "pypto/frontend/parser.h"
#include "pypto/ir/printer.h"
#include "round_trip_util.h"

namespace pypto::frontend::testing {

inline constexpr const char* kFile = "/src/kernels.py";

inline void EnsureInterpreter() {
  if (!Py_IsInitialized()) pybind11::initialize_interpreter();
}

// A request for `source` (line 1 of kFile), with FP32 tensors of the given shapes.
inline ParseRequest Request(const std::string& source, const std::map<std::string, ir::Shape>& tensors = {}) {
  ParseRequest request{.source = source, .filename = kFile};
  for (const auto& [name, shape] : tensors) request.tensor_specs[name] = TensorSpec{shape, ir::DataType::FP32};
  return request;
}

// A @pl.jit.incore function the entry may call, starting at `first_line` of kFile.
inline SubFunction Incore(const std::string& source, int first_line) {
  return SubFunction{.source = source, .filename = kFile, .line_offset = first_line - 1, .form = "incore"};
}

// The printed program, or the rendered diagnostic. Every program parsed here also checks the printer's
// round trip (round_trip_util.h), as parsed and, when the default pipeline accepts it, as lowered.
inline std::string ParseText(const ParseRequest& request) {
  EnsureInterpreter();
  pybind11::gil_scoped_acquire gil;
  auto program = ParseJitFunction(request);
  if (!program) return program.error().str();
  EXPECT_EQ(RoundTripFailure(**program), "");
  if (auto lowered = LowerForTest(*program)) {
    EXPECT_EQ(RoundTripFailure(**lowered), "");
  }
  return ir::PrintProgram(**program);
}

// An entry `f(x: [16, 32] FP32, y: Out [16, 32] FP32)` whose body is `body` (orchestration code), and
// the header of its printed form: what the orchestration-level tests (task order, runtime scopes)
// write their programs in.
inline constexpr const char* kOrchestrationHeader =
    "@pl.jit\n"
    "def f(x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]):\n";

inline std::string ParseOrchestration(const std::string& body) {
  return ParseText(Request(std::string(kOrchestrationHeader) + body, {{"x", {16, 32}}, {"y", {16, 32}}}));
}

inline constexpr const char* kPrintedOrchestrationHeader =
    "@pl.program\n"
    "class _jit_f:\n"
    "    @pl.function(type=pl.FunctionType.Opaque)\n"
    "    def f(self, x: pl.Tensor[[16, 32], pl.FP32], y: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> "
    "pl.Tensor[[16, 32], pl.FP32]:\n";

}  // namespace pypto::frontend::testing
