#include "diagnostics.h"

namespace pypto::bindings {

namespace py = pybind11;

void ThrowDiagnostic(const ir::Diagnostic& diagnostic) {
  py::object make_error = py::module_::import("pypto.language.parser.diagnostics").attr("make_error");
  py::object error = make_error(ir::DiagnosticKindName(diagnostic.kind), diagnostic.message, diagnostic.span.file,
                                diagnostic.span.line, diagnostic.span.column, diagnostic.hint);
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
  throw py::error_already_set();
}

}  // namespace pypto::bindings
