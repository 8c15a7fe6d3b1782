// libpypto_ir's C ABI, and the error plumbing every other library's C ABI reuses.
#include <cstdlib>

#include "pypto-c/ir.h"
#include "pypto/ir/c_api_bridge.h"
#include "pypto/ir/json.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"

namespace pypto::c_api {
namespace {
thread_local std::string last_error;
}

pypto_status Fail(pypto_status status, std::string message) {
  last_error = std::move(message);
  return status;
}

void ClearError() { last_error.clear(); }

char* CopyString(const std::string& text) {
  char* copy = static_cast<char*>(std::malloc(text.size() + 1));
  if (copy) std::memcpy(copy, text.c_str(), text.size() + 1);
  return copy;
}

}  // namespace pypto::c_api

using namespace pypto;

extern "C" {

const char* pypto_last_error_message(void) { return c_api::last_error.c_str(); }

void pypto_set_last_error_message(const char* message) { c_api::last_error = message ? message : ""; }

void pypto_string_free(char* text) { std::free(text); }

const char* pypto_ir_version(void) { return PYPTO_VERSION; }

pypto_status pypto_ir_program_print(const pypto_ir_program* program, char** text) {
  return c_api::Guard([&] {
    if (!program || !text) return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "pypto_ir_program_print: null argument");
    *text = c_api::CopyString(ir::PrintProgram(*program->program));
    return PYPTO_OK;
  });
}

pypto_status pypto_ir_program_to_json(const pypto_ir_program* program, int indent, char** json) {
  return c_api::Guard([&] {
    if (!program || !json) return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "pypto_ir_program_to_json: null argument");
    *json = c_api::CopyString(ir::ProgramToJson(*program->program, indent));
    return PYPTO_OK;
  });
}

pypto_status pypto_ir_program_from_json(const char* json, pypto_ir_program** program) {
  return c_api::Guard([&] {
    if (!json || !program) return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "pypto_ir_program_from_json: null argument");
    auto read = ir::ProgramFromJson(json);
    // A call its op refuses is located at its source line too (file:line:col: error: ...).
    if (!read) return c_api::Fail(PYPTO_ERR_PARSE, read.error().span.known() ? read.error().str() : read.error().message);
    *program = c_api::Wrap(*read);
    return PYPTO_OK;
  });
}

size_t pypto_ir_program_function_count(const pypto_ir_program* program) {
  return program ? program->program->functions().size() : 0;
}

pypto_status pypto_ir_program_function_info(const pypto_ir_program* program, size_t index, const char** name,
                                            int* function_type) {
  return c_api::Guard([&] {
    if (!program) return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "pypto_ir_program_function_info: null program");
    const auto& functions = program->program->functions();
    if (index >= functions.size())
      return c_api::Fail(PYPTO_ERR_NOT_FOUND, "pypto_ir_program_function_info: index out of range");
    if (name) *name = functions[index]->name().c_str();
    if (function_type) *function_type = static_cast<int>(functions[index]->type());
    return PYPTO_OK;
  });
}

void pypto_ir_program_destroy(pypto_ir_program* program) { delete program; }

pypto_status pypto_ir_op_exists(const char* name, int* exists) {
  return c_api::Guard([&] {
    if (!name || !exists) return c_api::Fail(PYPTO_ERR_INVALID_ARGUMENT, "pypto_ir_op_exists: null argument");
    *exists = ir::OpRegistry::Get().Find(name) != nullptr;
    return PYPTO_OK;
  });
}

}  // extern "C"
