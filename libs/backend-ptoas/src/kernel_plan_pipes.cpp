// The Planner's checks of cross-core pipe ops (cross_core_pipes.h): the pushes, pops and frees a
// mixed kernel's member hands tiles to its peer with, what their slots must hold, where this member's
// slot buffer can go, and where each slot of a tile popped on the cube core is freed.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "kernel_planner.h"
#include "mlir_types.h"
#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/soc.h"

namespace pypto::backend_ptoas::detail {
namespace {

int64_t TileBytes(const ir::TileType& tile) {
  int64_t elements = 1;
  for (int64_t extent : tile.shape()) elements *= extent;
  return elements * ir::DataTypeBytes(tile.dtype());
}

bool IsPop(const std::string& op) { return op == "tile.tpop_from_aic" || op == "tile.tpop_from_aiv"; }

// The tile a statement frees the slot of, if it is a pipe's free.
const ir::Var* FreedTile(const ir::Stmt& stmt) {
  const auto* eval = stmt.As<ir::EvalStmt>();
  const auto* call = eval ? eval->expr()->As<ir::Call>() : nullptr;
  if (!call || !call->target_name().starts_with("system.tfree_to_")) return nullptr;
  return call->args()[0]->As<ir::Var>();
}

// Whether `stmt` reads `var`, and whether a yield inside it does (the tile would be carried).
struct Reads final : ir::IRVisitor {
  explicit Reads(const ir::Var* var) : var_(var) {}
  void VisitVar(const std::shared_ptr<const ir::Var>& var) override {
    if (var.get() != var_) return;
    read = true;
    yielded |= in_yield_;
  }
  void VisitYield(const std::shared_ptr<const ir::YieldStmt>& stmt) override {
    in_yield_ = true;
    ir::IRVisitor::VisitYield(stmt);
    in_yield_ = false;
  }
  bool read = false;
  bool yielded = false;

 private:
  const ir::Var* var_;
  bool in_yield_ = false;
};

// The most slots a block's tiles read in place hold at once, its frees in their final places.
int HeldSlots(const std::vector<ir::StmtPtr>& block, const std::set<const ir::Var*>& slot_tiles) {
  int held = 0, most = 0;
  for (const auto& stmt : block) {
    const auto* pop = stmt->As<ir::AssignStmt>();
    if (pop && slot_tiles.contains(pop->var().get())) most = std::max(most, ++held);
    if (const ir::Var* freed = FreedTile(*stmt); freed && slot_tiles.contains(freed)) --held;
  }
  return most;
}

}  // namespace

Status Planner::CheckPipeOp(const ir::Call& call, const ir::Stmt& stmt, const ir::AssignStmt* assign) {
  const std::string& op = call.target_name();
  const ir::Span& span = call.span().known() ? call.span() : stmt.span();
  if (IsPipeSetupOp(op)) return CheckPipeSetup(call, span);
  if (!ir::IsCrossCorePipeOp(op)) return PipeError(call, stmt);
  const int64_t split = ir::FindAttr<int64_t>(call.kwargs(), "split").value_or(0);
  if (split > 2)
    return Error(span, fmt::format("backend-ptoas cannot lower '{}' with the odd split={} in kernel '{}': PTOAS's "
                                   "pipe ops split a tile up-down (1) or left-right (2) only",
                                   op, split, kernel_.name()));
  PipeUse& pipes = plan_.pipes;
  pipes.splits.insert(split);
  Pipe& pipe = pipes.ids[ir::FindAttr<int64_t>(call.kwargs(), "id").value_or(0)];
  const bool c2v = op == "tile.tpush_to_aiv" || op == "tile.tpop_from_aic" || op == "system.tfree_to_aic";
  pipe.directions |= c2v ? kDirC2V : kDirV2C;
  if (!IsPop(op)) {
    if (auto ok = CheckTileOperand(call.args()[0], op, span); !ok) return ok;
    // A push's tile is the whole one, before a split between the lanes.
    if (op.starts_with("tile.tpush"))
      pipe.largest_slot_bytes = std::max(pipe.largest_slot_bytes, TileBytes(*call.args()[0]->type()->As<ir::TileType>()));
    if (op == "tile.tpush_to_aic" && arch_ == "a5") {  // the NZ staging tile (cross_core_pipes.h)
      pipes.nz_staged_pushes = true;
      return NeedScratch(TileBytes(*call.args()[0]->type()->As<ir::TileType>()), call, span);
    }
    return {};
  }
  const ir::Var& var = *assign->var();
  const auto& tile = *var.type()->As<ir::TileType>();
  // A lane pops its half of a split tile; the slot holds the whole.
  pipe.largest_slot_bytes = std::max(pipe.largest_slot_bytes, TileBytes(tile) * (split == 0 ? 1 : 2));
  const bool cube = tile.memory_space() == ir::MemorySpace::Mat;
  if (!cube && !ir::FunctionAttr<int64_t>(kernel_, kPipeSlotRegionAttr)) {
    // The copy out of the slot writes the tile's valid region (its alloc_tile's operands).
    if (tile.has_partial_valid_shape())
      if (auto ok = CheckValidExtents(tile.valid_shape(), op, span); !ok) return ok;
    return DefineTile(*assign, span);
  }
  // Popped on the cube core, or into a vector member's pipe slot region: read in place, in its slot.
  if (tile.shape().size() > 2 || tile.has_partial_valid_shape())
    return Error(span, fmt::format("backend-ptoas cannot lower the tile '{}' {} popped from the {} core in kernel "
                                   "'{}': a tile read in its slot must be a whole 1-D or 2-D tile",
                                   var.name_hint(), tile.str(), cube ? "vector" : "cube", kernel_.name()));
  if (auto element = MlirElementType(tile.dtype()); !element) return Error(span, element.error());
  if (!tiles_.insert(&var).second)
    return Error(span, fmt::format("tile '{}' is assigned twice; backend-ptoas expects SSA form", var.name_hint()));
  pipes.slot_tiles.insert(&var);
  return {};
}

// A program's own pipe setup (reserve_buffer, import_peer_buffer, initialize_pipe) describes the
// pipes the backend sets up from the pushes and pops anyway (cross_core_pipes.h): the slot buffers'
// names, sizes and places are the backend's, and the setup emits nothing. What it adds is the depth
// of a pipe's rings (slot_num, local_slot_num), which the backend's setup of that pipe then carries.
Status Planner::CheckPipeSetup(const ir::Call& call, const ir::Span& span) {
  const std::string& op = call.target_name();
  if (op != "system.aic_initialize_pipe" && op != "system.aiv_initialize_pipe") return {};
  Pipe& pipe = plan_.pipes.ids[ir::FindAttr<int64_t>(call.kwargs(), "id").value_or(0)];
  for (auto [name, ring] : {std::pair{"slot_num", &pipe.slot_num}, std::pair{"local_slot_num", &pipe.local_slot_num}}) {
    const auto value = ir::FindAttr<int64_t>(call.kwargs(), name);
    if (!value) continue;
    if (*ring != 0 && *ring != *value)
      return Error(span, fmt::format("backend-ptoas cannot lower '{}' with {}={} in kernel '{}': an earlier setup of "
                                     "the same pipe asks for {}; set each pipe up once",
                                     op, name, *value, kernel_.name(), *ring));
    *ring = static_cast<int>(*value);
  }
  return {};
}

// A tile popped on the cube core is read where it landed, so its slot is freed only after its last
// reader in the block that pops it (the IR frees it at once: the simulator's pop copies it). Frees
// keep the order of their pops, as a pipe frees its oldest slot.
Status Planner::OrderPipeFrees(std::vector<ir::StmtPtr>& block) const {
  std::map<size_t, std::vector<ir::StmtPtr>> frees_after;
  std::set<const ir::Stmt*> moved;
  size_t floor = 0;
  const bool cube = kernel_.type() == ir::FunctionType::AIC;  // else a vector member's pipe slot region
  for (size_t p = 0; p < block.size(); ++p) {
    const auto* pop = block[p]->As<ir::AssignStmt>();
    if (!pop || !plan_.pipes.slot_tiles.contains(pop->var().get())) continue;
    const ir::Var* tile = pop->var().get();
    std::optional<size_t> free;
    size_t last = p;
    for (size_t j = p + 1; j < block.size(); ++j) {
      if (FreedTile(*block[j]) == tile) {
        free = j;
        continue;
      }
      Reads reads(tile);
      reads.VisitStmt(block[j]);
      if (!reads.read) continue;
      const auto* assign = block[j]->As<ir::AssignStmt>();
      const auto* call = assign ? assign->value()->As<ir::Call>() : nullptr;
      const OpLowering* lowering = call ? FindLowering(call->target_name()) : nullptr;
      const bool view = lowering && (lowering->form == OpForm::Reshape || lowering->form == OpForm::ValidShape);
      if (reads.yielded || view)
        return Error(block[j]->span(),
                     fmt::format("backend-ptoas cannot lower the tile '{}' popped from the {} core in kernel '{}': "
                                 "it is read in its slot, which cannot be {}; {}",
                                 tile->name_hint(), cube ? "vector" : "cube", kernel_.name(),
                                 reads.yielded ? "carried by a loop or an if" : "viewed as another tile",
                                 cube ? "move it into Left or Right first" : "copy it into a tile of its own first"));
      last = j;
    }
    if (!free)
      return Error(pop->span(), fmt::format("backend-ptoas cannot lower the tile '{}' popped from the {} core in "
                                            "kernel '{}': the block that pops it does not free its slot "
                                            "(pl.tfree_to_{})",
                                            tile->name_hint(), cube ? "vector" : "cube", kernel_.name(),
                                            cube ? "aiv" : "aic"));
    floor = std::max(last, floor);
    moved.insert(block[*free].get());
    frees_after[floor].push_back(block[*free]);
  }
  if (moved.empty()) return {};
  std::vector<ir::StmtPtr> ordered;
  for (size_t i = 0; i < block.size(); ++i) {
    if (!moved.contains(block[i].get())) ordered.push_back(block[i]);
    for (const auto& free : frees_after[i]) ordered.push_back(free);
  }
  block = std::move(ordered);
  return {};
}

Status Planner::PlacePipes() {
  PipeUse& pipes = plan_.pipes;
  if (!pipes.used()) return {};
  std::vector<std::vector<ir::StmtPtr>*> blocks = {&plan_.stmts};
  for (auto& [loop, body] : plan_.loop_bodies) blocks.push_back(&body);
  for (auto& [loop, body] : plan_.while_bodies) blocks.push_back(&body);
  for (auto& [branch, bodies] : plan_.branch_bodies) {
    blocks.push_back(&bodies.first);
    blocks.push_back(&bodies.second);
  }
  for (auto* block : blocks) {
    if (auto ok = OrderPipeFrees(*block); !ok) return ok;
    pipes.held_slots = std::max(pipes.held_slots, HeldSlots(*block, pipes.slot_tiles));
  }
  if (const int64_t* region = ir::FunctionAttr<int64_t>(kernel_, kPipeSlotRegionAttr)) {
    pipes.slot_region = *region;  // memory allocation reserved the ring below every tile
    return {};
  }
  // The slot buffer goes past every tile of the space the pops land in (and the Vec scratch).
  const ir::MemorySpace space =
      kernel_.type() == ir::FunctionType::AIC ? ir::MemorySpace::Mat : ir::MemorySpace::Vec;
  int64_t end = 0;
  for (const ir::Var* var : tiles_) {
    const auto* tile = var->type()->As<ir::TileType>();
    if (tile->memory_space() == space && tile->memref())
      end = std::max(end, tile->memref()->byte_offset + tile->memref()->size);
  }
  if (space == ir::MemorySpace::Vec && plan_.vec_scratch_offset >= 0)
    end = std::max(end, plan_.vec_scratch_offset + scratch_bytes_);
  const int64_t alignment = std::max<int64_t>(ir::SocForArch(arch_)->alignment, 1);
  pipes.consumer_free_offset = (end + alignment - 1) / alignment * alignment;
  return {};
}

}  // namespace pypto::backend_ptoas::detail
