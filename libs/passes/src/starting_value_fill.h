// A kernel that sets every element of a tensor to one value: the starting value
// (pl.create_tensor(..., init_value=v)) of a tensor that became a window of another.
#pragma once

#include "pypto/ir/stmt.h"

namespace pypto::passes {

// `with pl.at(name_hint="fill"):` storing a pl.tile.full of `value` over every element of `tensor`
// (statically shaped), one UB-sized block per iteration: [rows, cols] tiles of its last two
// dimensions, looped over the others. Null when
// no such tile can be made (a dtype pl.tile.full does not take).
ir::StmtPtr StartingValueFill(const ir::VarPtr& tensor, double value, const ir::Span& span);

}  // namespace pypto::passes
