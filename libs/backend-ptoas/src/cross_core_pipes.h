// The cross-core pipes of a mixed kernel's two members, as PTOAS's frontend pipe ops express them
// (hw-native-sys/PTOAS, include/PTO/IR/PTOOps.td and docs/designs/ptoas-tpush-tpop-design.md):
//
//   - each member sets its end up once, at its start: `pto.reserve_buffer` of the slot buffer the
//     tiles it pops land in (Vec on the vector core, Mat on the cube core), `pto.import_reserved_buffer`
//     of the one its peer reserved (found by the peer's symbol, so both functions are in one module),
//     and `pto.aic_initialize_pipe` / `pto.aiv_initialize_pipe` naming both, with, on a2a3, the GM
//     buffer the slots pass through (`!pto.ptr<f32>`, the function's last argument);
//   - every crossing is `pto.tpush_to_aiv` / `pto.tpush_to_aic` on the producer, `pto.tpop_from_aic` /
//     `pto.tpop_from_aiv` on the consumer, and `pto.tfree_from_aic` / `pto.tfree_from_aiv` when the
//     consumer is done with the slot.
//
// PTOAS carries one logical pipe per direction per function, both directions on one pipe when both
// are used (dir_mask 3), with a fixed ring: 8 slots for one direction, 4 each for both. A slot holds
// the largest tile crossing, whole (before a split between the vector lanes).
//
// A program may set up more pipes, by id (upstream's `id=1`), and rings of its own depth (`slot_num`,
// and on a2a3 `local_slot_num` for the consumer's local ring): PTOAS a56b18c has neither, and the
// backend writes them as upstream pypto's emitter (e2d0f78ae) does, for a later PTOAS. Each pipe is
// set up on its own, with its own slot buffer (the later ones named "..._slot_buffer_<id>", placed
// after the earlier ones) and, on a2a3, its own region of the GM slot buffer (`pto.addptr` past the
// rings of the pipes before it, as upstream's PrepareGMSlotBufferLayout lays them out); when a group
// uses a pipe other than 0, every setup, push, pop and free names its pipe's `id`.
//
// On a5 the vector core pushes straight into the cube's slot in L1, which holds the tile in the NZ
// layout the cube reads Mat tiles in: a pushed Vec tile is first moved (`pto.tmov`) into an NZ-laid
// tile in the Vec scratch, which is pushed (as upstream's ExpandMixedKernel moves it on Ascend950).
// On a2a3 the slots pass through GM, which takes the row-major tile as it is.
//
// A vector member that memory allocation placed around a pipe slot region (kPipeSlotRegionAttr; the
// passes' pipe_slot_region.h) reads the tiles it pops in their slots, as the cube does, and its ring
// is only that region deep: on a2a3 it sets its end up with PTOAS's `pto.initialize_l2g2l_pipe`,
// whose `local_slot_num` says how many slots of UB it consumes (the GM ring keeps the frontend's 4 or
// 8), and hands tiles over with `pto.tpush` / `pto.tpop` (into a `pto.declare_tile`) / `pto.tfree`
// on that pipe, as PTOAS lowers its frontend ops (test/basic/issue489_interleaved_tpop_tfree_a3.pto).
// On a5 the cube writes straight into that region, so the ring is the pipe's whole: both members'
// frontend setup carries its depth as `slot_num`, which PTOAS a56b18c lacks (its a5 pipe,
// pto.initialize_l2l_pipe, takes 4 or 8 slots only) and upstream pypto's emitter writes.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "pypto/support/expected.h"

namespace pypto::ir {
class Function;
class Var;
}  // namespace pypto::ir

namespace pypto::backend_ptoas {

// The function attribute of a vector kernel placed around a pipe slot region (int64, bytes); the
// passes name it kPipeSlotRegionAttr too (pipe_slot_region.h).
inline constexpr const char* kPipeSlotRegionAttr = "pipe_slot_region";

inline constexpr int kDirC2V = 1;  // cube to vector: tpush_to_aiv, tpop_from_aic
inline constexpr int kDirV2C = 2;  // vector to cube: tpush_to_aic, tpop_from_aiv

// One pipe of a mixed kernel's member, by its frontend pipe id (0 unless the program sets up more
// than one, as upstream's cross-core tests do with `id=1`): what its ops and the program's setup of it
// say (the first group), then what joining the members decided (ConnectPipes, the second).
struct Pipe {
  int directions = 0;               // kDirC2V | kDirV2C: the directions this member pushes or pops on
  int64_t largest_slot_bytes = 0;   // the largest tile it pushes or pops, whole
  int slot_num = 0;                 // the ring's depth the program's setup asks for (slot_num), or 0
  int local_slot_num = 0;           // a2a3: the consumer's local ring it asks for (local_slot_num), or 0

  int dir_mask = 0;                 // both members' directions
  int64_t slot_size = 0;            // bytes
  int64_t reserve_base = -1;        // this member's slot buffer (a consumer's), or -1
  int64_t reserve_size = 0;
  int64_t gm_offset = 0;            // a2a3: the bytes of the GM slot buffer before this pipe's rings

  // The slots of the ring a consumer reserves: the program's local ring, else its ring, else PTOAS's.
  int LocalSlots() const;
};

// One member's pipes: what its planning found (the first group), then what joining it with its peer
// decided (ConnectPipes, the second).
struct PipeUse {
  std::map<int64_t, Pipe> ids;      // its pipes, by id
  std::set<int64_t> splits;         // the split codes of its pipe ops
  // Tiles popped on the cube core: PTOAS has no Mat -> Mat copy, so they are read in place in their
  // slot (the pop's result), and the slot is freed after their last reader.
  std::set<const ir::Var*> slot_tiles;
  // The first byte past this member's tiles in the buffer its pops land in (Vec or Mat), where its
  // slot buffers can go.
  int64_t consumer_free_offset = 0;
  bool nz_staged_pushes = false;    // a5: its pushes to the cube go through an NZ tile in the Vec scratch
  int64_t slot_region = 0;          // a vector member's pipe slot region (kPipeSlotRegionAttr), or 0
  int held_slots = 0;               // the most slots its tiles read in place hold at once, in one block

  std::string peer;                // the other member's function name
  std::string buffer_prefix;       // "<group>": the slot buffers are "<group>_c2v_slot_buffer", ...
  bool gm_slot_buffer = false;     // a2a3: the GM slot buffer is the function's last argument
  bool named_ids = false;          // the group uses a pipe other than 0: every pipe op names its id
  int local_slots = 0;             // > 0: its end is a pto.initialize_l2g2l_pipe consuming this many slots

  int directions() const {
    int all = 0;
    for (const auto& [id, pipe] : ids) all |= pipe.directions;
    return all;
  }
  bool used() const { return directions() != 0; }
};

// PTOAS's ring depth for a pipe with `dir_mask` (PTOLowerFrontendPipeOpsPass at the table's revision).
inline int SlotsPerPipe(int dir_mask) { return dir_mask == (kDirC2V | kDirV2C) ? 4 : 8; }

inline int Pipe::LocalSlots() const {
  return local_slot_num > 0 ? local_slot_num : slot_num > 0 ? slot_num : SlotsPerPipe(dir_mask);
}

// The explicit setup ops a program may write its pipes with (reserve_buffer, import_peer_buffer,
// initialize_pipe). The backend sets each member's pipes up itself from its pushes and pops, so the
// setup it accepts (Planner::CheckPipeSetup) emits nothing.
bool IsPipeSetupOp(std::string_view op);

struct KernelPlan;

// Joins the planned members of the mixed kernel `group`: the directions and slot size they share,
// and each consumer's slot buffer past its tiles. Fails naming the group when PTOAS cannot express
// their pipes (a direction only one side uses, whole and split tiles on one pipe, a slot buffer that
// does not fit).
pypto::expected<void, std::string> ConnectPipes(std::string_view group, const ir::Function& aic, KernelPlan& aic_plan,
                                               const ir::Function& aiv, KernelPlan& aiv_plan, std::string_view arch);

}  // namespace pypto::backend_ptoas
