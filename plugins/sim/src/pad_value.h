// The element a fillpad writes outside a tile's valid region, as the bit pattern of the tile's
// element type. `min` and `max` are the identities of a max and a min reduction: -inf and +inf for
// floating-point types, the lowest and highest value for integers.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "pypto/ir/dtype.h"

namespace pypto::sim {

// nullopt for a mode other than zero/min/max or an element type the simulator does not pad.
std::optional<uint64_t> PadBits(ir::DataType dtype, std::string_view mode);

// The bit pattern of `value` as an element of `dtype` (FP16 and BF16 rounded to nearest even,
// integers truncated toward zero and wrapped): how pl.full fills a tile of a type the simulator
// does not compute on. nullopt for a type it has no pattern for.
std::optional<uint64_t> ValueBits(ir::DataType dtype, double value);

}  // namespace pypto::sim
