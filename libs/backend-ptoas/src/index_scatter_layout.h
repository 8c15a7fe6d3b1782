// Where the expansion of a scatter by index (index_scatter_blend.cpp) keeps its tiles in the Vec
// scratch, and of which types: the Planner sizes the scratch from it, the emitter places the tiles.
#pragma once

#include <cstdint>

#include "mlir_types.h"
#include "pypto/ir/expr.h"

namespace pypto::backend_ptoas {

struct IndexScatterLayout {
  TileExtent input;                 // the destination (and result) [M, C]
  TileExtent src;                   // the source and its flat indices [N, K]
  ir::DataType index = ir::DataType::INT32;  // tscatter's index type: INT32 for 4-byte elements, else INT16
  ir::DataType mask = ir::DataType::FP32;    // the ones scattered for the predicate: FP32, FP16 or INT8
  int64_t pred_cols = 0;            // bytes per row of tcmps' packed predicate
  // Byte offsets in the scratch (flat is -1 for tile.scatter, whose indices are the program's).
  int64_t values = 0, mask_at = 0, ones = 0, flat = -1, pred = 0, tmp = 0;
  int64_t bytes = 0;                // the scratch it needs

  static IndexScatterLayout Of(const ir::Call& call);
};

}  // namespace pypto::backend_ptoas
