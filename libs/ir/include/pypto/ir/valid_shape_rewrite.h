// Rewriting the expressions inside a tile type's valid shape, for mutators that replace variables.
#pragma once

#include <functional>

#include "pypto/ir/expr.h"

namespace pypto::ir {

// `type` with `rewrite` applied to each extent of its valid shape; null when `type` is not a tile
// with a partial valid shape, or when no extent changes.
TypePtr RewriteValidShape(const TypePtr& type, const std::function<ExprPtr(const ExprPtr&)>& rewrite);

}  // namespace pypto::ir
