// A decoded kernel's fills whose every byte the next instruction overwrites without reading them.
#pragma once

#include "sim_kernel.h"

namespace pypto::sim {

// Removes each Compute Fill that is followed, on its only path, by a whole-tile row or column
// broadcast into the same bytes (`t = pl.full(...); u = pl.col_expand(t, v)`, the way the DSL
// writes "v repeated over rows"): the broadcast never reads its tile operand, so the fill's stores
// are dead. A fill is kept when a branch or loop can enter at the broadcast (then the broadcast is
// not reached through the fill only), when the broadcast writes a valid region or widened elements
// (it keeps or reads what the tile held), or when its vector lies in the filled bytes. The fill's
// scalar code is handed to the broadcast, and branch targets and loop partners are renumbered, so
// the kernel computes exactly what it did, with one store pass fewer per pair.
void DropOverwrittenFills(DecodedKernel& kernel);

}  // namespace pypto::sim
