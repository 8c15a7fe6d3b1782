// pto-isa's C++ tile interface for hand-written kernels built for the simulator with the host compiler
// (docs/kernels.md, "On the simulator"). Same names, template parameters and semantics as upstream's
// <pto/pto-inst.hpp>; each family is a header of its own:
//   pto/types.h          TileType, BLayout, SLayout, Layout, PadValue, RoundMode, CmpMode, ...
//   pto/sync.h           PIPE_*/EVENT_ID*, set_flag/wait_flag/pipe_barrier (no-ops: program order)
//   pto/global_tensor.h  Shape, Stride, GlobalTensor
//   pto/tile.h           Tile, TileLeft/TileRight/TileAcc/TileMat, TASSIGN (the core's local buffers)
//   pto/load_store.h     TLOAD, TSTORE, TFILLPAD
//   pto/elementwise.h    TADD.., TADDS.., TEXP.., TEXPANDS, TCVT, TCMP/TCMPS, TSEL/TSELS, TREM, TFMOD,
//                        TLRELU/TPRELU, TADDC/TSUBC/TADDSC/TSUBSC, TPART*
//   pto/bitwise.h        TAND/TOR/TXOR/TSHL/TSHR (and their S forms), TNOT
//   pto/reduce_expand.h  TROWSUM/MAX/MIN/PROD/ARGMAX/ARGMIN, TCOL..., TROWEXPAND*, TCOLEXPAND*
//   pto/rearrange.h      TMOV, TEXTRACT, TINSERT, TCONCAT, TTRANS
//   pto/matmul.h         TMATMUL, TMATMUL_ACC, TMATMUL_BIAS
// The operations are plain loops over the valid region that the compiler vectorizes (-O2 with
// -fvect-cost-model=dynamic, backend_extern::HostCompileCommand). A misuse (an address past the end
// of UB, a window outside its tile) fails the run naming the kernel's line.
// PTO_CPUSTUB_HPP is the guard pto-isa's CPU stub defines; kernels test it to know they run on a CPU.
#ifndef PTO_CPUSTUB_HPP
#define PTO_CPUSTUB_HPP

#include <cstdint>

#include "pto/address_spaces.h"
#include "pto/bitwise.h"
#include "pto/elementwise.h"
#include "pto/global_tensor.h"
#include "pto/load_store.h"
#include "pto/matmul.h"
#include "pto/rearrange.h"
#include "pto/reduce_expand.h"
#include "pto/sync.h"
#include "pto/tile.h"
#include "pto/types.h"
#include "pypto_sim_dtypes.h"

#endif  // PTO_CPUSTUB_HPP
