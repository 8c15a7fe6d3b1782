// Constant bounds of integer index expressions, for sizing what is shaped at run time: a tensor
// created with `[tile_rows, D]` where `tile_rows = pl.min(TILE, t_dim - base)` holds at most TILE
// rows, so its buffer can be allocated at that bound once, while loops and valid shapes keep the
// run-time extent.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "affine_form.h"
#include "pypto/ir/expr.h"

namespace pypto::frontend {

// The interval [lo, hi] an integer value lies in; a missing end is unbounded on that side.
struct ScalarBounds {
  std::optional<int64_t> lo, hi;
};

// The values a loop variable takes: start, stop (exclusive) and step of its loop.
struct LoopRange {
  ir::ExprPtr start, stop, step;
};
using LoopRangeOf = std::function<std::optional<LoopRange>(const ir::Var&)>;

// The bounds of `expr`, following the definitions of scalar variables and the ranges of loop
// variables (transitively, to a fixed depth). Parameters and values merged after branches are
// unbounded unless their type says otherwise.
ScalarBounds BoundsOf(const ir::ExprPtr& expr, const ScalarDefinition& definition, const LoopRangeOf& loop_range);

}  // namespace pypto::frontend
