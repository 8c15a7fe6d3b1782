// For the libraries' own C API implementations: handle wrapping and exception-free guards.
#pragma once

#include <cstring>
#include <exception>
#include <string>
#include <utility>

#include "pypto-c/ir.h"
#include "pypto/ir/program.h"

struct pypto_ir_program {
  pypto::ir::ProgramPtr program;
};

namespace pypto::c_api {

// Records the message returned by pypto_last_error_message() and returns `status`.
pypto_status Fail(pypto_status status, std::string message);
void ClearError();

// Runs `body` (returning pypto_status); turns any escaping exception into PYPTO_ERR_INTERNAL.
template <typename F>
pypto_status Guard(F&& body) noexcept {
  try {
    ClearError();
    return std::forward<F>(body)();
  } catch (const std::exception& e) {
    return Fail(PYPTO_ERR_INTERNAL, e.what());
  } catch (...) {
    return Fail(PYPTO_ERR_INTERNAL, "unknown exception");
  }
}

// A malloc'ed copy for strings handed to C callers (freed by pypto_string_free).
char* CopyString(const std::string& text);

inline pypto_ir_program* Wrap(ir::ProgramPtr program) { return new pypto_ir_program{std::move(program)}; }

}  // namespace pypto::c_api
