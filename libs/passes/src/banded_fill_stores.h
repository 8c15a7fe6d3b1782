// A constant fill that only goes to global memory need not exist whole on chip: see
// banded_fill_stores.cpp.
#pragma once

#include "pypto/ir/diagnostic.h"
#include "pypto/ir/soc.h"
#include "pypto/ir/stmt.h"

namespace pypto::passes {

// Rewrites each `t = tile.full([R, C], v)` of a kernel body that is larger than its buffer and only
// stored (plain `tile.store(t, offsets, tensor)`) into a fill of a band of its rows, stored once per
// band. Anything else is left as it is.
ir::Result<ir::StmtPtr> FillStoresInBands(const ir::StmtPtr& body, const ir::SocSpec& soc);

}  // namespace pypto::passes
