// Fuzzes the DSL frontend (frontend::ParseJitFunction, what `@pl.jit` hands a kernel's source to).
// An input is the parameters' specialisation as JSON on its first line, as pypto_frontend_parse_jit
// takes it ({"x": {"shape": [128, 128], "dtype": "FP32"}}), then the function's source.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "embedded_python.h"
#include "pypto/frontend/parser.h"
#include "pypto/ir/dtype.h"
#include "pypto/ir/printer.h"

namespace {

// The specialisation line, read the way the C ABI reads it; a line it refuses leaves the entry's
// parameters unspecialised, which the parser must then report.
void ReadSpecs(std::string_view line, pypto::frontend::ParseRequest& request) {
  auto specs = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!specs.is_object()) return;
  for (const auto& [name, value] : specs.items()) {
    if (!value.is_object() || !value.contains("shape") || !value.contains("dtype")) continue;
    const auto& shape = value["shape"];
    const auto& dtype_name = value["dtype"];
    if (!shape.is_array() || !dtype_name.is_string()) continue;
    pypto::frontend::TensorSpec spec;
    bool integral = true;
    for (const auto& extent : shape) {
      if (!extent.is_number_integer()) integral = false;
      else spec.shape.push_back(extent.get<int64_t>());
    }
    auto dtype = pypto::ir::DataTypeFromName(dtype_name.get<std::string>());
    if (!integral || !dtype) continue;
    spec.dtype = *dtype;
    request.tensor_specs[name] = spec;
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  pypto::fuzz::StartInterpreter();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  pypto::frontend::ParseRequest request{.filename = "fuzz.py", .line_offset = 1, .program_name = "_jit_fuzz"};
  if (newline != std::string_view::npos) {
    ReadSpecs(input.substr(0, newline), request);
    request.source = std::string(input.substr(newline + 1));
  } else {
    request.source = std::string(input);
  }
  auto program = pypto::frontend::ParseJitFunction(request);
  if (program) (void)pypto::ir::PrintProgram(**program);
  return 0;
}
