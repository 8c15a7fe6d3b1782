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

// Accepts `pl.Tensor`, `pl.Tensor[[d0, d1], pl.DTYPE]`, and either wrapped in `pl.Out[...]` or
// `pl.InOut[...]`. A bare `pl.Tensor` takes its shape and dtype from `spec`.
ir::Result<ResolvedParam> ResolveParam(py::handle annotation, const std::string& name, const TensorSpec* spec,
                                       const SourceMap& map);

}  // namespace pypto::frontend
