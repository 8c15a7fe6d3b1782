// A window of an Acc tile that a product accumulates into (`win = pl.tile.slice(acc, ...)` then
// `pl.matmul_acc(win, ...)`) is a view of the tile, as upstream's tile.slice (pto.subview) is the
// MAD's destination: the product lands in the tile's own bytes. InferTileMemorySpace accepts such a
// write and AllocateMemoryAddr places the window in the tile's block; both ask this of the tile.
#pragma once

#include <algorithm>

#include "pypto/ir/type.h"

namespace pypto::passes {

// Whether a window of `outer` can be a view of it: an Acc matrix (its dimensions before the last
// two all 1), since a view is placed by its last two offsets.
inline bool IsAccWindowViewable(const ir::TileType& outer) {
  const auto& shape = outer.shape();
  return outer.memory_space() == ir::MemorySpace::Acc && shape.size() >= 2 &&
         std::all_of(shape.begin(), shape.end() - 2, [](int64_t extent) { return extent == 1; });
}

}  // namespace pypto::passes
