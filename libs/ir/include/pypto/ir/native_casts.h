// The element conversions a vector core performs in one instruction (`pto.tcvt`), per SoC. Any other
// conversion is a chain of these (the LegalizeTileCast pass finds it) or not possible at all.
#pragma once

#include <vector>

#include "pypto/ir/dtype.h"
#include "pypto/ir/soc.h"

namespace pypto::ir {

// The dtypes `from` converts to in one instruction on `soc`; empty for a dtype it cannot convert.
const std::vector<DataType>& NativeCastTargets(const SocSpec& soc, DataType from);

bool IsNativeCast(const SocSpec& soc, DataType from, DataType to);

}  // namespace pypto::ir
