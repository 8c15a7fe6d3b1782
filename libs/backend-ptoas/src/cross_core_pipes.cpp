// Cross-core pipes (cross_core_pipes.h): joining a mixed kernel's two planned members, and printing
// each member's pipe setup and its pushes, pops and frees.
#include "cross_core_pipes.h"

#include <fmt/format.h>

#include <algorithm>

#include "kernel_emitter.h"
#include "kernel_plan.h"
#include "mlir_types.h"
#include "pypto/ir/function.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/soc.h"

namespace pypto::backend_ptoas {
namespace {

const char* DirectionName(int direction) { return direction == kDirC2V ? "cube-to-vector" : "vector-to-cube"; }
const char* BufferSuffix(int direction) { return direction == kDirC2V ? "_c2v_slot_buffer" : "_v2c_slot_buffer"; }

// "the cube-to-vector pipe", or "the cube-to-vector pipe with id=1" of a group with more pipes.
std::string PipeName(int direction, int64_t id) {
  return id == 0 ? fmt::format("the {} pipe", DirectionName(direction))
                 : fmt::format("the {} pipe with id={}", DirectionName(direction), id);
}

// A slot buffer's name: pipe 0's is "<group>_c2v_slot_buffer", pipe 1's "<group>_c2v_slot_buffer_1".
std::string BufferName(const PipeUse& pipes, int direction, int64_t id) {
  return pipes.buffer_prefix + BufferSuffix(direction) + (id == 0 ? "" : fmt::format("_{}", id));
}

// The direction a member's pops arrive on: the vector core consumes cube-to-vector, the cube core
// vector-to-cube.
int ConsumedDirection(const ir::Function& kernel) {
  return kernel.type() == ir::FunctionType::AIC ? kDirV2C : kDirC2V;
}

// The whole slots of the ring memory allocation reserved at the bottom of UB (cross_core_pipes.h).
int RegionSlots(const PipeUse& pipes) {
  return static_cast<int>(pipes.slot_region / pipes.ids.at(0).slot_size);
}

// The ring memory allocation reserved at the bottom of UB (cross_core_pipes.h), the one pipe of its
// group, which must hold every popped tile read at once, and no more than PTOAS's ring has: on a2a3
// the local end of the pipe through GM, on a5 the pipe's whole ring (both members' slot_num).
pypto::expected<void, std::string> PlaceSlotRegion(std::string_view group, const ir::Function& kernel,
                                                   PipeUse& pipes) {
  if (pipes.ids.size() != 1 || !pipes.ids.contains(0))
    return pypto::unexpected(fmt::format(
        "{}: backend-ptoas cannot place the pipe slot region of mixed kernel '{}' in UB: memory allocation reserved "
        "it for the one pipe of '{}', which sets up {} pipes; give its tiles room past them for each pipe's ring",
        kernel.span().str(), group, kernel.name(), pipes.ids.size()));
  Pipe& pipe = pipes.ids.at(0);
  const int slots = RegionSlots(pipes);
  const int most = SlotsPerPipe(pipe.dir_mask);
  if (slots < std::max(pipes.held_slots, 1) || slots > most)
    return pypto::unexpected(fmt::format(
        "{}: backend-ptoas cannot place the pipe slot region of mixed kernel '{}' in UB: memory allocation "
        "reserved {} bytes for '{}', which hold {} slots of {} bytes; its popped tiles hold {} at once, PTOAS's "
        "ring has {}",
        kernel.span().str(), group, pipes.slot_region, kernel.name(), slots, pipe.slot_size, pipes.held_slots, most));
  if (pipes.gm_slot_buffer) pipes.local_slots = slots;
  pipe.reserve_base = 0;
  pipe.reserve_size = slots * pipe.slot_size;
  return {};
}

// Each pipe's slot buffer on its consumer, past the member's tiles, one after another by pipe id.
pypto::expected<void, std::string> PlaceSlotBuffers(std::string_view group, const ir::Function& kernel,
                                                    PipeUse& pipes, const ir::SocSpec& soc) {
  const int direction = ConsumedDirection(kernel);
  if (pipes.slot_region > 0) return PlaceSlotRegion(group, kernel, pipes);
  const bool cube = kernel.type() == ir::FunctionType::AIC;
  const int64_t capacity = soc.capacity(cube ? ir::MemorySpace::Mat : ir::MemorySpace::Vec);
  const int64_t alignment = std::max<int64_t>(soc.alignment, 1);
  int64_t base = pipes.consumer_free_offset;
  for (auto& [id, pipe] : pipes.ids) {
    if (!(pipe.dir_mask & direction)) continue;
    const int slots = pipe.LocalSlots();
    const int64_t size = pipe.slot_size * slots;
    // The pipe's tiles read in their slots at once must fit its ring (the cube reads its pops in place).
    if ((pipe.slot_num > 0 || pipe.local_slot_num > 0) && slots < pipes.held_slots)
      return pypto::unexpected(fmt::format(
          "{}: backend-ptoas cannot lower {} of mixed kernel '{}': its ring on '{}' has the {} slots its setup asks "
          "for, and '{}' reads {} popped tiles in their slots at once; ask for {} slots or more",
          kernel.span().str(), PipeName(direction, id), group, kernel.name(), slots, kernel.name(), pipes.held_slots,
          pipes.held_slots));
    if (base + size > capacity)
      return pypto::unexpected(fmt::format(
          "{}: backend-ptoas cannot place the {}-byte slot buffer of {} of mixed kernel '{}' in {}: PTOAS "
          "keeps {} slots of its largest crossing tile ({} bytes), and the tiles of '{}' use {} up to byte {} of the {} "
          "{} has; cross smaller tiles, or free {} bytes of {}",
          kernel.span().str(), size, PipeName(direction, id), group, cube ? "L1" : "UB", slots, pipe.slot_size,
          kernel.name(), cube ? "L1" : "UB", base, capacity, soc.name, base + size - capacity, cube ? "L1" : "UB"));
    pipe.reserve_base = base;
    pipe.reserve_size = size;
    base = (base + size + alignment - 1) / alignment * alignment;
  }
  return {};
}

// Both members' view of one pipe: the directions and slot size they share, and the ring its setups
// ask for (either member's, which must agree).
pypto::expected<void, std::string> JoinPipe(std::string_view group, int64_t id, const ir::Function& aic, Pipe& cube,
                                            const ir::Function& aiv, Pipe& vector) {
  for (int direction : {kDirC2V, kDirV2C}) {
    if (!((cube.directions ^ vector.directions) & direction)) continue;
    const ir::Function& lone = (cube.directions & direction) ? aic : aiv;
    const ir::Function& peer = (cube.directions & direction) ? aiv : aic;
    return pypto::unexpected(fmt::format("{}: backend-ptoas cannot lower {} of mixed kernel '{}': '{}' uses "
                                         "it and its peer '{}' never does",
                                         lone.span().str(), PipeName(direction, id), group, lone.name(), peer.name()));
  }
  for (auto [name, a, b] : {std::tuple{"slot_num", &cube.slot_num, &vector.slot_num},
                            std::tuple{"local_slot_num", &cube.local_slot_num, &vector.local_slot_num}}) {
    if (*a != 0 && *b != 0 && *a != *b)
      return pypto::unexpected(fmt::format("{}: backend-ptoas cannot lower the pipe with id={} of mixed kernel '{}': "
                                           "'{}' sets it up with {}={} and '{}' with {}={}; give both the same",
                                           aiv.span().str(), id, group, aic.name(), name, *a, aiv.name(), name, *b));
    *a = *b = std::max(*a, *b);
  }
  for (Pipe* pipe : {&cube, &vector}) {
    pipe->dir_mask = cube.directions | vector.directions;
    pipe->slot_size = std::max(cube.largest_slot_bytes, vector.largest_slot_bytes);
  }
  return {};
}

// a2a3: each pipe's rings in the GM slot buffer, one after another by pipe id, as upstream lays them
// out (a pipe of both directions has two rings; a ring is its slot_num, else PTOAS's, slots deep).
void PlaceGmRings(PipeUse& pipes) {
  int64_t offset = 0;
  for (auto& [id, pipe] : pipes.ids) {
    pipe.gm_offset = offset;
    const int rings = pipe.dir_mask == (kDirC2V | kDirV2C) ? 2 : 1;
    offset += rings * (pipe.slot_num > 0 ? pipe.slot_num : SlotsPerPipe(pipe.dir_mask)) * pipe.slot_size;
  }
}

}  // namespace

bool IsPipeSetupOp(std::string_view op) {
  return op == "system.aic_initialize_pipe" || op == "system.aiv_initialize_pipe" || op == "system.reserve_buffer" ||
         op == "system.import_peer_buffer";
}

pypto::expected<void, std::string> ConnectPipes(std::string_view group, const ir::Function& aic, KernelPlan& aic_plan,
                                               const ir::Function& aiv, KernelPlan& aiv_plan, std::string_view arch) {
  PipeUse& cube = aic_plan.pipes;
  PipeUse& vector = aiv_plan.pipes;
  std::set<int64_t> ids;
  for (const PipeUse* pipes : {&cube, &vector})
    for (const auto& [id, pipe] : pipes->ids) ids.insert(id);
  for (int64_t id : ids) {
    Pipe& c = cube.ids[id];
    Pipe& v = vector.ids[id];
    if (!(c.directions | v.directions)) {  // set up, never used: nothing to write
      cube.ids.erase(id);
      vector.ids.erase(id);
      continue;
    }
    if (auto joined = JoinPipe(group, id, aic, c, aiv, v); !joined) return joined;
  }
  std::set<int64_t> splits = cube.splits;
  splits.insert(vector.splits.begin(), vector.splits.end());
  if (splits.contains(0) && splits.size() > 1)
    return pypto::unexpected(fmt::format("{}: backend-ptoas cannot lower the pipes of mixed kernel '{}': PTOAS's pipe "
                                         "carries either whole tiles (split=0) or the vector lanes' halves (split=1 "
                                         "or 2), and its crossings use both",
                                         aiv.span().str(), group));
  const ir::SocSpec& soc = *ir::SocForArch(arch);
  for (auto [plan, peer] : {std::pair{&aic_plan, &aiv}, std::pair{&aiv_plan, &aic}}) {
    PipeUse& pipes = plan->pipes;
    pipes.peer = peer->name();
    pipes.buffer_prefix = std::string(group);
    pipes.named_ids = pipes.ids.size() > 1 || !pipes.ids.contains(0);
    // On a2a3 the slots pass through global memory (PTOAS's initialize_l2g2l_pipe); on a5 they go
    // from core to core.
    pipes.gm_slot_buffer = arch == "a2a3";
    if (pipes.gm_slot_buffer) PlaceGmRings(pipes);
  }
  // a5: the cube writes straight into the vector member's pipe slot region, so both rings are that
  // deep (upstream's slot_num; cross_core_pipes.h).
  if (vector.slot_region > 0 && !vector.gm_slot_buffer && vector.ids.contains(0))
    cube.ids[0].slot_num = vector.ids[0].slot_num = RegionSlots(vector);
  if (auto placed = PlaceSlotBuffers(group, aic, cube, soc); !placed) return placed;
  return PlaceSlotBuffers(group, aiv, vector, soc);
}

namespace {

std::string SplitAttr(int64_t split) { return fmt::format("{} : i8", split); }

// A pipe op's attributes: its pipe's id where the group names them, then the rest.
std::vector<PtoAttr> PipeAttrs(const PipeUse& pipes, int64_t id, std::vector<PtoAttr> rest) {
  if (pipes.named_ids) rest.insert(rest.begin(), PtoAttr{"id", fmt::format("{} : i32", id)});
  return rest;
}

// The same in the custom syntax: "{id = 1, split = 0}".
std::string PipeAttrText(const PipeUse& pipes, int64_t id, const std::string& rest) {
  return pipes.named_ids ? fmt::format("{{id = {}, {}}}", id, rest) : fmt::format("{{{}}}", rest);
}

}  // namespace

// Before the tiles: for each of its pipes, this member's slot buffer, its peer's, and its end of the
// pipe.
void KernelEmitter::EmitPipeSetup() {
  const PipeUse& pipes = plan_.pipes;
  if (!pipes.used()) return;
  for (const auto& [id, pipe] : pipes.ids) EmitPipeSetup(id, pipe);
}

void KernelEmitter::EmitPipeSetup(int64_t id, const Pipe& pipe) {
  const PipeUse& pipes = plan_.pipes;
  const bool cube = kernel_.type() == ir::FunctionType::AIC;
  const int consumed = ConsumedDirection(kernel_);
  const int produced = kDirC2V + kDirV2C - consumed;
  const ir::Span& span = kernel_.span();
  const TypedValue none{names_.Constant(0, "i32"), "i32"};
  TypedValue local = none, imported = none;
  if (pipe.dir_mask & consumed) {
    const std::string name = BufferName(pipes, consumed, id);
    local = {names_.Named(name), "i32"};
    const std::string location = fmt::format("#pto.address_space<{}>", cube ? "mat" : "vec");
    PtoOp reserve{.name = "pto.reserve_buffer",
                  .result = local,
                  .attrs = {{"name", fmt::format("\"{}\"", name)},
                            {"size", fmt::format("{} : i32", pipe.reserve_size)},
                            {"location", location},
                            {"autoAlloc", "false"},
                            {"base", fmt::format("{} : i32", pipe.reserve_base)}},
                  .custom_syntax = fmt::format("{} = pto.reserve_buffer {{name = \"{}\", size = {}, location = {}, "
                                               "auto = false, base = {}}} -> i32",
                                               local.value, name, pipe.reserve_size, location, pipe.reserve_base),
                  .generic_operands = GenericOperands{}};
    Add(prologue_, reserve, span);
  }
  if (pipe.dir_mask & produced) {
    const std::string name = BufferName(pipes, produced, id);
    imported = {names_.Named(name + "_import"), "i32"};
    PtoOp import{.name = "pto.import_reserved_buffer",
                 .result = imported,
                 .attrs = {{"name", fmt::format("\"{}\"", name)}, {"peer_func", "@" + pipes.peer}},
                 .custom_syntax = fmt::format("{} = pto.import_reserved_buffer {{name = \"{}\", peer_func = @{}}} -> i32",
                                              imported.value, name, pipes.peer),
                 .generic_operands = GenericOperands{}};
    Add(prologue_, import, span);
  }
  const TypedValue& c2v = cube ? imported : local;
  const TypedValue& v2c = cube ? local : imported;
  if (pipes.local_slots > 0) return EmitLocalSlotPipe(pipe, c2v, v2c);
  std::vector<TypedValue> operands = {c2v, v2c};
  std::string gm;
  if (pipes.gm_slot_buffer) {
    const TypedValue region = GmRing(id, pipe);
    operands.insert(operands.begin(), region);
    gm = fmt::format("gm_slot_buffer = {} : {}, ", region.value, region.type);
  }
  const std::string op = cube ? "pto.aic_initialize_pipe" : "pto.aiv_initialize_pipe";
  std::vector<PtoAttr> attrs = {{"dir_mask", fmt::format("{} : i8", pipe.dir_mask)},
                                {"slot_size", fmt::format("{} : i32", pipe.slot_size)}};
  std::string text = fmt::format("dir_mask = {}, slot_size = {}", pipe.dir_mask, pipe.slot_size);
  for (auto [name, ring] : {std::pair{"slot_num", pipe.slot_num}, std::pair{"local_slot_num", pipe.local_slot_num}}) {
    if (ring == 0) continue;
    attrs.push_back({name, fmt::format("{} : i32", ring)});
    text += fmt::format(", {} = {}", name, ring);
  }
  PtoOp init{.name = op,
             .attrs = PipeAttrs(pipes, id, std::move(attrs)),
             .custom_syntax = fmt::format("{} {} ({}c2v_consumer_buf = {} : i32, v2c_consumer_buf = {} : i32)", op,
                                          PipeAttrText(pipes, id, text), gm, c2v.value, v2c.value),
             .generic_operands = GenericOperands{.groups = {operands}}};
  Add(prologue_, init, span);
}

// a2a3: the pipe's region of the GM slot buffer, the buffer itself for the first pipe, else the
// pointer moved past the rings before it (pto.addptr counts f32 elements).
TypedValue KernelEmitter::GmRing(int64_t id, const Pipe& pipe) {
  const TypedValue buffer{gm_slot_buffer_arg_, PtrType("f32")};
  if (pipe.gm_offset == 0) return buffer;
  const TypedValue moved{names_.Named(fmt::format("{}_gm_slot_buffer_{}", plan_.pipes.buffer_prefix, id)),
                         PtrType("f32")};
  const TypedValue elements = IndexConstant(pipe.gm_offset / 4);
  PtoOp addptr{.name = "pto.addptr",
               .result = moved,
               .custom_syntax = fmt::format("{} = pto.addptr {}, {} : {} -> {}", moved.value, buffer.value,
                                            elements.value, buffer.type, moved.type),
               .generic_operands = GenericOperands{{{buffer}, {elements}}}};
  Add(prologue_, addptr, kernel_.span());
  return moved;
}

// The pipe of a vector member around a pipe slot region (cross_core_pipes.h): PTOAS's own a2a3 pipe,
// its GM ring the frontend's, its ring in UB `local_slot_num` slots deep; its ops name the handle.
void KernelEmitter::EmitLocalSlotPipe(const Pipe& pipe, const TypedValue& c2v, const TypedValue& v2c) {
  const PipeUse& pipes = plan_.pipes;
  pipe_ = {names_.Named(pipes.buffer_prefix + "_pipe"), "!pto.pipe"};
  std::vector<TypedValue> operands = {{gm_slot_buffer_arg_, PtrType("f32")}, c2v};
  if (pipe.dir_mask == (kDirC2V | kDirV2C)) operands.push_back(v2c);
  std::vector<std::string> spelled;
  for (const auto& operand : operands) spelled.push_back(fmt::format("{} : {}", operand.value, operand.type));
  const int slots = SlotsPerPipe(pipe.dir_mask);
  PtoOp init{.name = "pto.initialize_l2g2l_pipe",
             .result = pipe_,
             .attrs = {{"dir_mask", fmt::format("{} : i8", pipe.dir_mask)},
                       {"slot_size", fmt::format("{} : i32", pipe.slot_size)},
                       {"slot_num", fmt::format("{} : i32", slots)},
                       {"local_slot_num", fmt::format("{} : i32", pipes.local_slots)}},
             .custom_syntax = fmt::format("{} = pto.initialize_l2g2l_pipe {{dir_mask = {}, slot_size = {}, slot_num = {}, "
                                          "local_slot_num = {}}}({}) -> !pto.pipe",
                                          pipe_.value, pipe.dir_mask, pipe.slot_size, slots, pipes.local_slots,
                                          fmt::join(spelled, ", ")),
             .generic_operands = GenericOperands{.groups = {operands}}};
  Add(prologue_, init, kernel_.span());
}

// A pop on the pipe handle (EmitLocalSlotPipe) binds a declared tile to its slot, as PTOAS lowers
// pto.tpop_from_aic: the tile's valid extents (dynamic in its type) are the box the slot holds.
TypedValue KernelEmitter::PopIntoSlot(const ir::Var& var, int64_t split, const ir::Span& span) {
  const TypedValue tile{names_.Named(var.name_hint()), TileOperandType(var)};
  Add(body_, PtoOp{.name = "pto.declare_tile", .result = tile, .custom_syntax = fmt::format(
                       "{} = pto.declare_tile -> {}", tile.value, tile.type), .generic_operands = GenericOperands{}},
      span);
  const TileExtent box = TileRowsCols(*var.type()->As<ir::TileType>());
  const TypedValue rows = IndexConstant(box.rows);
  const TypedValue cols = IndexConstant(box.cols);
  Add(body_,
      PtoOp{.name = "pto.set_validshape",
            .custom_syntax = fmt::format("pto.set_validshape {}, {}, {} : {}", tile.value, rows.value, cols.value,
                                         tile.type),
            .generic_operands = GenericOperands{.groups = {{tile, rows, cols}}}},
      span);
  Add(body_, PipeHandleOp("pto.tpop", &tile, split), span);
  return tile;
}

// `pto.tpush(%t, %pipe : T, !pto.pipe) {split = s}`, `pto.tpop(...)`, `pto.tfree(%pipe : !pto.pipe) {...}`.
PtoOp KernelEmitter::PipeHandleOp(const std::string& name, const TypedValue* tile, int64_t split) const {
  std::vector<TypedValue> operands;
  if (tile) operands.push_back(*tile);
  operands.push_back(pipe_);
  std::vector<std::string> values, types;
  for (const auto& operand : operands) {
    values.push_back(operand.value);
    types.push_back(operand.type);
  }
  return PtoOp{.name = name,
               .attrs = {{"split", SplitAttr(split)}},
               .custom_syntax = fmt::format("{}({} : {}) {{split = {}}}", name, fmt::join(values, ", "),
                                            fmt::join(types, ", "), split),
               .generic_operands = GenericOperands{.groups = {operands}}};
}

// a5: `tile` (the pushed box) moved into a tile of the cube's NZ layout in the Vec scratch, which
// the push then writes into the cube's slot as it is (cross_core_pipes.h).
TypedValue KernelEmitter::NzStaged(const TypedValue& tile, const ir::Var& source, const ir::Span& span) {
  const auto& source_type = *source.type()->As<ir::TileType>();
  const TileExtent box = TileRowsCols(source_type);
  const TypedValue staged{names_.Named(source.name_hint() + "_nz"),
                          TileBufType(ir::MemorySpace::Vec, ElementOf(source_type.dtype()), box,
                                      ImplicitTileLayout(ir::MemorySpace::Mat, box), 0)};
  const TypedValue addr{names_.Constant(plan_.vec_scratch_offset, "i64"), "i64"};
  Add(body_, AllocTile(staged, addr, IndexConstant(box.rows), IndexConstant(box.cols)), span);
  Add(body_, DpsOp("pto.tmov", {tile}, staged), span);
  return staged;
}

// A tile popped on the cube core that a b_trans matmul reads transposed: its [K, N] ZN view is the
// slot's bytes retyped, `pto.treshape` of the pop (as upstream pypto views a tpop slot, which owns no
// buffer to place a second alloc_tile at), its valid extents static as a treshape's result has them.
void KernelEmitter::TransposeInSlot(const ir::Var& var, const TypedValue& popped, const ir::Span& span) {
  const TypedValue view{names_.Named(var.name_hint() + "_t"), TransposedView(var).type};
  transposed_views_[&var] = view.value;
  Add(body_,
      PtoOp{.name = "pto.treshape",
            .result = view,
            .custom_syntax = fmt::format("{} = pto.treshape {} : {} -> {}", view.value, popped.value, popped.type,
                                         view.type),
            .generic_operands = GenericOperands{.groups = {{popped}}}},
      span);
}

// A push hands the tile to the peer; a pop on the vector core copies the tile out of its slot into
// the tile's own buffer (memory allocation placed it, and views of it may follow), one on the cube
// core names the slot itself (there is no Mat -> Mat copy); a free gives the oldest slot back.
void KernelEmitter::LowerPipe(const ir::Call& call, const ir::AssignStmt* assign, const ir::Span& span) {
  const std::string& op = call.target_name();
  const int64_t split = ir::FindAttr<int64_t>(call.kwargs(), "split").value_or(0);
  const int64_t id = ir::FindAttr<int64_t>(call.kwargs(), "id").value_or(0);
  const PipeUse& pipes = plan_.pipes;
  const auto attrs = [&] { return PipeAttrs(pipes, id, {{"split", SplitAttr(split)}}); };
  const std::string attr_text = PipeAttrText(pipes, id, fmt::format("split = {}", split));
  if (op.starts_with("tile.tpush_to_")) {
    const std::string pto = "pto." + op.substr(std::string_view("tile.").size());
    const ir::Var& source = *call.args()[0]->As<ir::Var>();
    const auto& source_type = *source.type()->As<ir::TileType>();
    // A slot carries the whole box: a tile narrowed by its valid shape is pushed through a view of
    // all of it (the consumer narrows what it popped; each lane reads its half of the box).
    TypedValue tile = source_type.has_partial_valid_shape() ? CornerView(source, source_type.shape(), span)
                                                            : TileOperand(source, false);
    if (op == "tile.tpush_to_aic" && pipes.nz_staged_pushes) tile = NzStaged(tile, source, span);
    if (!pipe_.value.empty()) return Add(body_, PipeHandleOp("pto.tpush", &tile, split), span);
    Add(body_,
        PtoOp{.name = pto,
              .attrs = attrs(),
              .custom_syntax = fmt::format("{}({} : {}) {}", pto, tile.value, tile.type, attr_text),
              .generic_operands = GenericOperands{.groups = {{tile}}}},
        span);
    return;
  }
  if (op.starts_with("system.tfree_to_")) {
    // tfree_to_aic frees a slot of the cube-to-vector pipe: PTOAS's tfree_from_aic.
    const std::string pto = op == "system.tfree_to_aic" ? "pto.tfree_from_aic" : "pto.tfree_from_aiv";
    if (!pipe_.value.empty()) return Add(body_, PipeHandleOp("pto.tfree", nullptr, split), span);
    Add(body_, PtoOp{.name = pto, .attrs = attrs(), .custom_syntax = fmt::format("{} {}", pto, attr_text),
                     .generic_operands = GenericOperands{}},
        span);
    return;
  }
  const std::string pto = "pto." + op.substr(std::string_view("tile.").size());
  const ir::Var& var = *assign->var();
  if (!pipe_.value.empty()) {
    values_[&var] = PopIntoSlot(var, split, span).value;
    return;
  }
  const std::string type = TileOperandType(var);
  const bool in_slot = pipes.slot_tiles.contains(&var);
  const TypedValue popped{names_.Named(var.name_hint() + (in_slot ? "" : "_slot")), type};
  // The tile types here keep their valid extents dynamic (v_row=?), which a pop takes as operands:
  // the whole box the slot holds (the copy out of it writes the tile's valid region).
  const TileExtent box = TileRowsCols(*var.type()->As<ir::TileType>());
  const TypedValue rows = IndexConstant(box.rows);
  const TypedValue cols = IndexConstant(box.cols);
  Add(body_,
      PtoOp{.name = pto,
            .result = popped,
            .attrs = attrs(),
            .custom_syntax = fmt::format("{} = {}({}, {}) {} -> {}", popped.value, pto, rows.value, cols.value,
                                         attr_text, type),
            .generic_operands = GenericOperands{.groups = {{rows}, {cols}}, .sized = true}},
      span);
  if (in_slot) {
    values_[&var] = popped.value;
    if (plan_.transposed_mats.contains(&var)) TransposeInSlot(var, popped, span);
    return;
  }
  Add(body_, DpsOp("pto.tmov", {popped}, {values_.at(&var), type}), span);
}

}  // namespace pypto::backend_ptoas
