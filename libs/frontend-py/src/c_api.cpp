#include "pypto-c/frontend.h"

#include <pybind11/embed.h>

#include <nlohmann/json.hpp>

#include "pypto/frontend/parser.h"
#include "pypto/ir/c_api_bridge.h"

using namespace pypto;

namespace {

// C callers may have no interpreter; start one for the life of the process.
void EnsureInterpreter() {
  if (!Py_IsInitialized()) pybind11::initialize_interpreter();
}

frontend::TensorSpec SpecFromJson(const std::string& name, const nlohmann::json& value) {
  frontend::TensorSpec spec;
  spec.shape = value.at("shape").get<ir::Shape>();
  auto dtype = ir::DataTypeFromName(value.at("dtype").get<std::string>());
  if (!dtype) throw std::invalid_argument("parameter '" + name + "': unknown dtype " + value.at("dtype").dump());
  spec.dtype = *dtype;
  return spec;
}

}  // namespace

extern "C" {

const char* pypto_frontend_version(void) { return PYPTO_VERSION; }

pypto_status pypto_frontend_parse_jit(const char* source, const char* filename, int line_offset,
                                      const char* specs_json, pypto_ir_program** program) {
  return c_api::Guard([&] {
    if (!source || !filename || !program)
      return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "pypto_frontend_parse_jit: null argument");
    frontend::ParseRequest request{.source = source, .filename = filename, .line_offset = line_offset};
    try {
      auto specs = nlohmann::json::parse(specs_json && *specs_json ? specs_json : "{}");
      for (const auto& [name, value] : specs.items()) request.tensor_specs[name] = SpecFromJson(name, value);
    } catch (const std::exception& e) {
      return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, std::string("pypto_frontend_parse_jit: bad specs: ") + e.what());
    }
    EnsureInterpreter();
    pybind11::gil_scoped_acquire gil;
    auto parsed = frontend::ParseJitFunction(request);
    if (!parsed) return c_api::Fail(PYPTO_ERR_PARSE, parsed.error().str());
    *program = c_api::Wrap(*parsed);
    return PYPTO_OK;
  });
}

pypto_status pypto_frontend_parse_program(const char* source, const char* filename, int line_offset,
                                          pypto_ir_program** program) {
  return c_api::Guard([&] {
    if (!source || !filename || !program)
      return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "pypto_frontend_parse_program: null argument");
    EnsureInterpreter();
    pybind11::gil_scoped_acquire gil;
    auto parsed = frontend::ParseProgram({.source = source, .filename = filename, .line_offset = line_offset});
    if (!parsed) return c_api::Fail(PYPTO_ERR_PARSE, parsed.error().str());
    *program = c_api::Wrap(*parsed);
    return PYPTO_OK;
  });
}

}  // extern "C"
