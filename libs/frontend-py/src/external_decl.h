// Hand-written kernels declared in a @pl.program: `@pl.function(type=AIV, external_source=PATH)`
// with a signature-only body. The IR function carries the source's absolute path in its attribute
// "external_source"; passes and backends leave its (empty) body alone.
#pragma once

#include <map>
#include <string>

#include "ast_node.h"
#include "pypto/ir/diagnostic.h"
#include "pypto/ir/function.h"

namespace pypto::frontend {

using ir::kExternalSourceAttr;

// The absolute path of an `external_source=` keyword. `evaluated` is the path Python computed when
// the decorator ran (any expression: a pathlib.Path, a constant); without it the keyword must be a
// string literal (the printer's form). A relative path is taken from the directory of the file that
// declares the program; the file must exist.
ir::Result<std::string> ReadExternalSource(py::handle value, const std::string* evaluated, const SourceMap& map,
                                           const std::string& function);

// Only AIC and AIV kernels may be hand-written.
ir::Result<bool> CheckExternalType(ir::FunctionType type, const std::string& function, const ir::Span& span);

// The body of an external function is `...` (a docstring may precede it); anything else is an error.
ir::Result<bool> CheckSignatureOnlyBody(py::handle def, const SourceMap& map, const std::string& function);

// Whether a function is a hand-written kernel.
bool IsExternal(const std::map<std::string, ir::AttrValue>& attrs);

}  // namespace pypto::frontend
