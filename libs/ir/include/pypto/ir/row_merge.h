// The 2-D form of an N-d tile whose leading dimensions merge into its rows: [d0, ..., dn-2, dn-1]
// becomes [d0 * ... * dn-2, dn-1]. FlattenTileNdTo2D makes it; type checks, the JSON reader, the
// store's shapes= and backend-ptoas recognise a 2-D tile standing for an N-d window by it.
#pragma once

#include "pypto/ir/type.h"

namespace pypto::ir {

inline Shape RowMerged(const Shape& shape) {
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < shape.size(); ++d) rows *= shape[d];
  return {rows, shape.back()};
}

// Whether the 2-D `merged` is the row-merged form of the N-d (rank above 2) `window`.
inline bool IsRowMergedFrom(const Shape& merged, const Shape& window) {
  return merged.size() == 2 && window.size() > 2 && merged == RowMerged(window);
}

}  // namespace pypto::ir
