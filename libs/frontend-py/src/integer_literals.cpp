#include "integer_literals.h"

#include <fmt/format.h>

namespace pypto::frontend {

ir::Result<bool> CheckIntegerLiterals(py::handle tree, const SourceMap& map) {
  for (py::handle node : py::module_::import("ast").attr("walk")(tree)) {
    if (!IsNode(node, "Constant")) continue;
    py::object value = node.attr("value");
    if (!py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value)) continue;
    int overflow = 0;
    (void)PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
    if (overflow == 0) continue;
    // Python refuses to print an integer of more than 4300 digits; such a literal is named by its size.
    const auto bits = value.attr("bit_length")().cast<int64_t>();
    std::string literal = bits <= 1024 ? std::string(py::str(value)) : fmt::format("of {} bits", bits);
    return ir::MakeError(ir::DiagnosticKind::Syntax, fmt::format("integer literal {} does not fit in 64 bits", literal),
                         map.SpanOf(node),
                         "integers in a program are INT64 at most: -9223372036854775808 to 9223372036854775807");
  }
  return true;
}

}  // namespace pypto::frontend
