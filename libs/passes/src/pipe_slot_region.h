// The pipe slot region of a vector kernel: where the tiles it pops from the cube are read in place.
//
// A mixed kernel's vector member receives the cube's tiles in a ring of slots in UB (the slot buffer,
// its pops' `pto.reserve_buffer`). PTOAS's frontend pipe ops (revision a56b18c) fix that ring at 8
// slots of the largest crossing tile, 4 when both directions are used, and the backend used to place
// it past every tile, with each pop copied out of its slot into a buffer of its own. A kernel whose
// tiles and 4 such slots do not fit in UB (deepseek's hca_cmp_qk_pv: 32 KiB slots, 128 KiB of ring)
// is laid out the way upstream pypto lays out every pipe instead: the ring is reserved first, at the
// bottom of UB, only as deep as the pops alive at once need (upstream's default is 2 slots), the
// popped tiles are read in their slots (upstream's tpop results own no buffer), and the tiles go past
// it. On a2a3 the backend then writes the vector end of the pipe with PTOAS's own
// `pto.initialize_l2g2l_pipe`, whose `local_slot_num` is that depth (the GM ring keeps its 4 or 8);
// on a5, where the cube writes straight into that ring, both members' frontend pipe setup carries it
// as upstream's `slot_num`.
#pragma once

#include <cstdint>
#include <vector>

#include "pypto/ir/function.h"

namespace pypto::passes {

// The function attribute (int64, bytes) of a vector kernel placed around a pipe slot region: its
// popped tiles are read in their slots, a ring of whole slots in the first bytes of UB, and every
// other tile lies past it. backend-ptoas reads it by this name (cross_core_pipes.h) and reserves
// exactly that ring as the kernel's slot buffer.
inline constexpr const char* kPipeSlotRegionAttr = "pipe_slot_region";

// What a vector kernel's own pipe ops say about its pipe.
struct PipeSlotUse {
  int dir_mask = 0;                  // 1: it pops from the cube, 2: it pushes to it, 3: both
  int64_t slot_size = 0;             // bytes of the largest tile crossing, whole (before a lane split)
  std::vector<const ir::Var*> pops;  // its tiles popped from the cube, in statement order
};

PipeSlotUse CollectPipeSlotUse(const ir::Function& kernel);

// PTOAS's ring depth for the frontend pipe ops (a56b18c): 8 slots, 4 per direction for both.
inline int FrontendSlotsPerPipe(int dir_mask) { return dir_mask == 3 ? 4 : 8; }

// Whether a popped tile can be read in its slot: a whole tile of at most two dimensions (the backend
// binds it to the slot's tile as it is), never carried by a loop or an if, nor renamed (`u = t`).
bool ReadableInSlot(const ir::Var& tile);

}  // namespace pypto::passes
