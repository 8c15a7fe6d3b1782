// `optimizations=[pl.split(MODE), pl.cross_core_slot(slot_num=N)]` on pl.at and pl.spmd: the
// performance hints of a mixed scope, read and checked here so that a misspelt or out-of-range hint
// is refused where it is written instead of being dropped.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "ast_node.h"
#include "pypto/ir/diagnostic.h"

namespace pypto::frontend {

struct ScopeOptimizations {
  std::optional<int64_t> split_mode;  // pl.SplitMode: NONE 0, UP_DOWN 1, LEFT_RIGHT 2
  std::optional<int64_t> slot_num;    // cross-core pipe slots, from either spelling
};

// Reads the `optimizations=` value of `owner` ("pl.at", "pl.spmd"). The deprecated
// `pl.split(MODE, slot_num=N)` is accepted with a DeprecationWarning at its slot_num= naming
// `pl.cross_core_slot(slot_num=N)`.
ir::Result<ScopeOptimizations> ReadScopeOptimizations(py::handle value, std::string_view owner, const SourceMap& map);

}  // namespace pypto::frontend
