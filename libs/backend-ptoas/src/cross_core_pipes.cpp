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

// The direction a member's pops arrive on: the vector core consumes cube-to-vector, the cube core
// vector-to-cube.
int ConsumedDirection(const ir::Function& kernel) {
  return kernel.type() == ir::FunctionType::AIC ? kDirV2C : kDirC2V;
}

// The whole slots of the ring memory allocation reserved at the bottom of UB (cross_core_pipes.h).
int RegionSlots(const PipeUse& pipes) { return static_cast<int>(pipes.slot_region / pipes.slot_size); }

// That ring, which must hold every popped tile read at once, and no more than PTOAS's ring has: on
// a2a3 the local end of the pipe through GM, on a5 the pipe's whole ring (both members' slot_num).
pypto::expected<void, std::string> PlaceSlotRegion(std::string_view group, const ir::Function& kernel,
                                                   PipeUse& pipes) {
  const int slots = RegionSlots(pipes);
  const int most = SlotsPerPipe(pipes.dir_mask);
  if (slots < std::max(pipes.held_slots, 1) || slots > most)
    return pypto::unexpected(fmt::format(
        "{}: backend-ptoas cannot place the pipe slot region of mixed kernel '{}' in UB: memory allocation "
        "reserved {} bytes for '{}', which hold {} slots of {} bytes; its popped tiles hold {} at once, PTOAS's "
        "ring has {}",
        kernel.span().str(), group, pipes.slot_region, kernel.name(), slots, pipes.slot_size, pipes.held_slots, most));
  if (pipes.gm_slot_buffer) pipes.local_slots = slots;
  pipes.reserve_base = 0;
  pipes.reserve_size = slots * pipes.slot_size;
  return {};
}

pypto::expected<void, std::string> PlaceSlotBuffer(std::string_view group, const ir::Function& kernel, PipeUse& pipes,
                                                   const ir::SocSpec& soc) {
  const int direction = ConsumedDirection(kernel);
  if (!(pipes.dir_mask & direction)) return {};
  const bool cube = kernel.type() == ir::FunctionType::AIC;
  if (pipes.slot_region > 0) return PlaceSlotRegion(group, kernel, pipes);
  const int64_t capacity = soc.capacity(cube ? ir::MemorySpace::Mat : ir::MemorySpace::Vec);
  const int slots = pipes.slot_num > 0 ? pipes.slot_num : SlotsPerPipe(pipes.dir_mask);
  const int64_t size = pipes.slot_size * slots;
  if (pipes.consumer_free_offset + size > capacity)
    return pypto::unexpected(fmt::format(
        "{}: backend-ptoas cannot place the {}-byte slot buffer of the {} pipe of mixed kernel '{}' in {}: PTOAS "
        "keeps {} slots of its largest crossing tile ({} bytes), and the tiles of '{}' use {} up to byte {} of the {} "
        "{} has; cross smaller tiles, or free {} bytes of {}",
        kernel.span().str(), size, DirectionName(direction), group, cube ? "L1" : "UB",
        slots, pipes.slot_size, kernel.name(), cube ? "L1" : "UB",
        pipes.consumer_free_offset, capacity, soc.name, pipes.consumer_free_offset + size - capacity,
        cube ? "L1" : "UB"));
  pipes.reserve_base = pipes.consumer_free_offset;
  pipes.reserve_size = size;
  return {};
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
  for (int direction : {kDirC2V, kDirV2C}) {
    if (!((cube.directions ^ vector.directions) & direction)) continue;
    const ir::Function& lone = (cube.directions & direction) ? aic : aiv;
    const ir::Function& peer = (cube.directions & direction) ? aiv : aic;
    return pypto::unexpected(fmt::format("{}: backend-ptoas cannot lower the {} pipe of mixed kernel '{}': '{}' uses "
                                         "it and its peer '{}' never does",
                                         lone.span().str(), DirectionName(direction), group, lone.name(), peer.name()));
  }
  std::set<int64_t> splits = cube.splits;
  splits.insert(vector.splits.begin(), vector.splits.end());
  if (splits.contains(0) && splits.size() > 1)
    return pypto::unexpected(fmt::format("{}: backend-ptoas cannot lower the pipes of mixed kernel '{}': PTOAS's pipe "
                                         "carries either whole tiles (split=0) or the vector lanes' halves (split=1 "
                                         "or 2), and its crossings use both",
                                         aiv.span().str(), group));
  const int dir_mask = cube.directions | vector.directions;
  const ir::SocSpec& soc = *ir::SocForArch(arch);
  for (auto [plan, peer] : {std::pair{&aic_plan, &aiv}, std::pair{&aiv_plan, &aic}}) {
    PipeUse& pipes = plan->pipes;
    pipes.peer = peer->name();
    pipes.buffer_prefix = std::string(group);
    pipes.dir_mask = dir_mask;
    pipes.slot_size = std::max(cube.largest_slot_bytes, vector.largest_slot_bytes);
    // On a2a3 the slots pass through global memory (PTOAS's initialize_l2g2l_pipe); on a5 they go
    // from core to core.
    pipes.gm_slot_buffer = arch == "a2a3";
  }
  // a5: the cube writes straight into the vector member's pipe slot region, so both rings are that
  // deep (upstream's slot_num; cross_core_pipes.h).
  if (vector.slot_region > 0 && !vector.gm_slot_buffer) cube.slot_num = vector.slot_num = RegionSlots(vector);
  if (auto placed = PlaceSlotBuffer(group, aic, cube, soc); !placed) return placed;
  return PlaceSlotBuffer(group, aiv, vector, soc);
}

namespace {

std::string SplitAttr(int64_t split) { return fmt::format("{} : i8", split); }

}  // namespace

// Before the tiles: this member's slot buffer, its peer's, and its end of the pipe.
void KernelEmitter::EmitPipeSetup() {
  const PipeUse& pipes = plan_.pipes;
  if (!pipes.used()) return;
  const bool cube = kernel_.type() == ir::FunctionType::AIC;
  const int consumed = ConsumedDirection(kernel_);
  const int produced = kDirC2V + kDirV2C - consumed;
  const ir::Span& span = kernel_.span();
  const TypedValue none{names_.Constant(0, "i32"), "i32"};
  TypedValue local = none, imported = none;
  if (pipes.dir_mask & consumed) {
    const std::string name = pipes.buffer_prefix + BufferSuffix(consumed);
    local = {names_.Named(name), "i32"};
    const std::string location = fmt::format("#pto.address_space<{}>", cube ? "mat" : "vec");
    PtoOp reserve{.name = "pto.reserve_buffer",
                  .result = local,
                  .attrs = {{"name", fmt::format("\"{}\"", name)},
                            {"size", fmt::format("{} : i32", pipes.reserve_size)},
                            {"location", location},
                            {"autoAlloc", "false"},
                            {"base", fmt::format("{} : i32", pipes.reserve_base)}},
                  .custom_syntax = fmt::format("{} = pto.reserve_buffer {{name = \"{}\", size = {}, location = {}, "
                                               "auto = false, base = {}}} -> i32",
                                               local.value, name, pipes.reserve_size, location, pipes.reserve_base),
                  .generic_operands = GenericOperands{}};
    Add(prologue_, reserve, span);
  }
  if (pipes.dir_mask & produced) {
    const std::string name = pipes.buffer_prefix + BufferSuffix(produced);
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
  if (pipes.local_slots > 0) return EmitLocalSlotPipe(c2v, v2c);
  std::vector<TypedValue> operands = {c2v, v2c};
  std::string gm;
  if (pipes.gm_slot_buffer) {
    operands.insert(operands.begin(), {gm_slot_buffer_arg_, PtrType("f32")});
    gm = fmt::format("gm_slot_buffer = {} : {}, ", gm_slot_buffer_arg_, PtrType("f32"));
  }
  const std::string op = cube ? "pto.aic_initialize_pipe" : "pto.aiv_initialize_pipe";
  std::vector<PtoAttr> attrs = {{"dir_mask", fmt::format("{} : i8", pipes.dir_mask)},
                                {"slot_size", fmt::format("{} : i32", pipes.slot_size)}};
  std::string ring;
  if (pipes.slot_num > 0) {
    attrs.push_back({"slot_num", fmt::format("{} : i32", pipes.slot_num)});
    ring = fmt::format(", slot_num = {}", pipes.slot_num);
  }
  PtoOp init{.name = op,
             .attrs = std::move(attrs),
             .custom_syntax = fmt::format("{} {{dir_mask = {}, slot_size = {}{}}} ({}c2v_consumer_buf = {} : i32, "
                                          "v2c_consumer_buf = {} : i32)",
                                          op, pipes.dir_mask, pipes.slot_size, ring, gm, c2v.value, v2c.value),
             .generic_operands = GenericOperands{.groups = {operands}}};
  Add(prologue_, init, span);
}

// The pipe of a vector member around a pipe slot region (cross_core_pipes.h): PTOAS's own a2a3 pipe,
// its GM ring the frontend's, its ring in UB `local_slot_num` slots deep; its ops name the handle.
void KernelEmitter::EmitLocalSlotPipe(const TypedValue& c2v, const TypedValue& v2c) {
  const PipeUse& pipes = plan_.pipes;
  pipe_ = {names_.Named(pipes.buffer_prefix + "_pipe"), "!pto.pipe"};
  std::vector<TypedValue> operands = {{gm_slot_buffer_arg_, PtrType("f32")}, c2v};
  if (pipes.dir_mask == (kDirC2V | kDirV2C)) operands.push_back(v2c);
  std::vector<std::string> spelled;
  for (const auto& operand : operands) spelled.push_back(fmt::format("{} : {}", operand.value, operand.type));
  const int slots = SlotsPerPipe(pipes.dir_mask);
  PtoOp init{.name = "pto.initialize_l2g2l_pipe",
             .result = pipe_,
             .attrs = {{"dir_mask", fmt::format("{} : i8", pipes.dir_mask)},
                       {"slot_size", fmt::format("{} : i32", pipes.slot_size)},
                       {"slot_num", fmt::format("{} : i32", slots)},
                       {"local_slot_num", fmt::format("{} : i32", pipes.local_slots)}},
             .custom_syntax = fmt::format("{} = pto.initialize_l2g2l_pipe {{dir_mask = {}, slot_size = {}, slot_num = {}, "
                                          "local_slot_num = {}}}({}) -> !pto.pipe",
                                          pipe_.value, pipes.dir_mask, pipes.slot_size, slots, pipes.local_slots,
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

// A push hands the tile to the peer; a pop on the vector core copies the tile out of its slot into
// the tile's own buffer (memory allocation placed it, and views of it may follow), one on the cube
// core names the slot itself (there is no Mat -> Mat copy); a free gives the oldest slot back.
void KernelEmitter::LowerPipe(const ir::Call& call, const ir::AssignStmt* assign, const ir::Span& span) {
  const std::string& op = call.target_name();
  const int64_t split = ir::FindAttr<int64_t>(call.kwargs(), "split").value_or(0);
  if (op.starts_with("tile.tpush_to_")) {
    const std::string pto = "pto." + op.substr(std::string_view("tile.").size());
    const ir::Var& source = *call.args()[0]->As<ir::Var>();
    const auto& source_type = *source.type()->As<ir::TileType>();
    // A slot carries the whole box: a tile narrowed by its valid shape is pushed through a view of
    // all of it (the consumer narrows what it popped; each lane reads its half of the box).
    TypedValue tile = source_type.has_partial_valid_shape() ? CornerView(source, source_type.shape(), span)
                                                            : TileOperand(source, false);
    if (op == "tile.tpush_to_aic" && plan_.pipes.nz_staged_pushes) tile = NzStaged(tile, source, span);
    if (!pipe_.value.empty()) return Add(body_, PipeHandleOp("pto.tpush", &tile, split), span);
    Add(body_,
        PtoOp{.name = pto,
              .attrs = {{"split", SplitAttr(split)}},
              .custom_syntax = fmt::format("{}({} : {}) {{split = {}}}", pto, tile.value, tile.type, split),
              .generic_operands = GenericOperands{.groups = {{tile}}}},
        span);
    return;
  }
  if (op.starts_with("system.tfree_to_")) {
    // tfree_to_aic frees a slot of the cube-to-vector pipe: PTOAS's tfree_from_aic.
    const std::string pto = op == "system.tfree_to_aic" ? "pto.tfree_from_aic" : "pto.tfree_from_aiv";
    if (!pipe_.value.empty()) return Add(body_, PipeHandleOp("pto.tfree", nullptr, split), span);
    Add(body_,
        PtoOp{.name = pto,
              .attrs = {{"split", SplitAttr(split)}},
              .custom_syntax = fmt::format("{} {{split = {}}}", pto, split),
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
  const bool in_slot = plan_.pipes.slot_tiles.contains(&var);
  const TypedValue popped{names_.Named(var.name_hint() + (in_slot ? "" : "_slot")), type};
  // The tile types here keep their valid extents dynamic (v_row=?), which a pop takes as operands:
  // the whole box the slot holds (the copy out of it writes the tile's valid region).
  const TileExtent box = TileRowsCols(*var.type()->As<ir::TileType>());
  const TypedValue rows = IndexConstant(box.rows);
  const TypedValue cols = IndexConstant(box.cols);
  Add(body_,
      PtoOp{.name = pto,
            .result = popped,
            .attrs = {{"split", SplitAttr(split)}},
            .custom_syntax = fmt::format("{} = {}({}, {}) {{split = {}}} -> {}", popped.value, pto, rows.value,
                                         cols.value, split, type),
            .generic_operands = GenericOperands{.groups = {{rows}, {cols}}, .sized = true}},
      span);
  if (in_slot) {
    values_[&var] = popped.value;
    return;
  }
  Add(body_, DpsOp("pto.tmov", {popped}, {values_.at(&var), type}), span);
}

}  // namespace pypto::backend_ptoas
