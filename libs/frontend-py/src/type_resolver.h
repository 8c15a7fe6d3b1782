// Parameter annotations -> IR types and directions.
#pragma once

#include "ast_node.h"
#include "pypto/frontend/parser.h"
#include "pypto/ir/function.h"

namespace pypto::frontend {

struct ResolvedParam {
  ir::TypePtr type;
  ir::ParamDirection direction = ir::ParamDirection::In;
};

// Accepts `pl.Tensor`, `pl.Tensor[[d0, d1], pl.DTYPE]` (either wrapped in `pl.Out[...]` or
// `pl.InOut[...]`) and `pl.Scalar[pl.DTYPE]`. A bare `pl.Tensor` takes its shape and dtype from `spec`.
ir::Result<ResolvedParam> ResolveParam(py::handle annotation, const std::string& name, const TensorSpec* spec,
                                       const SourceMap& map);

ir::Result<ir::DataType> ResolveDtype(py::handle node, const SourceMap& map);

// Checks a variable annotation (`x: pl.Tile[[64, 1], pl.FP32] = ...`) against the type of the value
// assigned: shapes and dtypes must agree (and the memory space, when the annotation names one).
ir::Result<bool> CheckDeclaredType(py::handle annotation, const std::string& name, const ir::TypePtr& actual,
                                   const SourceMap& map);

}  // namespace pypto::frontend
