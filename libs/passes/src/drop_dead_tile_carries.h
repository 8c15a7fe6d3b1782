// Tile values a kernel's loops carry (or its ifs yield) that nothing reads.
#pragma once

#include "pypto/ir/stmt.h"

namespace pypto::passes {

// `body` without the tile slots of its loops and ifs whose values are never read. The frontend
// carries every name a loop body rebinds, so a K loop written as upstream's pipelined LM head
//
//   w = pl.slice(weight, [192, 512], [o0, 0]); acc = pl.matmul(x, w, b_trans=True)
//   for kb in pl.pipeline(1, n, stage=2):
//       w = pl.slice(weight, [192, 512], [o0, kb * 512]); acc = pl.matmul_acc(acc, x, w, b_trans=True)
//
// carries `w` although no iteration reads the previous one and nothing reads it after the loop.
// Placement counts a carry as a read other than the matmul's, which would keep a Vec copy of the
// weight next to its Mat load (a vector-side tile as large as L1's operand). A slot is dead when
// its result is never read and its iterator is read only by the yield handing it to the next
// iteration; dropping one can make another dead (a nested loop's result yielded by an outer one),
// so slots are dropped until none is. Loops whose bodies still hold break / continue (which carry a
// value per slot) are left alone. Scalars and tensors are kept: their carries place nothing.
ir::StmtPtr DropDeadTileCarries(const ir::StmtPtr& body);

}  // namespace pypto::passes
