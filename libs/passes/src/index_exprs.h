// INDEX constants and tuples of them, as the passes write offsets, shapes and loop bounds into the
// ops they build.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "pypto/ir/expr.h"

namespace pypto::passes {

inline ir::ExprPtr IndexConst(int64_t value, const ir::Span& span) {
  return std::make_shared<ir::ConstInt>(value, ir::DataType::INDEX, span);
}

inline ir::ExprPtr IndexTuple(const std::vector<int64_t>& values, const ir::Span& span) {
  std::vector<ir::ExprPtr> elements;
  elements.reserve(values.size());
  for (int64_t value : values) elements.push_back(IndexConst(value, span));
  return std::make_shared<ir::TupleLiteral>(std::move(elements), span);
}

}  // namespace pypto::passes
