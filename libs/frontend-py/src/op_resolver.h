// DSL call spellings (`pl.add`, `pl.tile.load`, ...) -> registered ops.
#pragma once

#include <string>
#include <vector>

#include "pypto/ir/op_registry.h"

namespace pypto::frontend {

// `pl.load`/`pl.store` are tile movement; unified spellings such as `pl.add` pick the tile.* or
// tensor.* op from the first operand's type; `pl.tile.X` and `pl.tensor.X` name the op directly.
ir::Result<const ir::OpDef*> ResolveOp(const std::string& dsl_name, const std::vector<ir::ExprPtr>& args,
                                       const ir::Span& span);

}  // namespace pypto::frontend
