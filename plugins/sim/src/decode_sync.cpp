// Decoding the ops that synchronize or communicate rather than compute: prefetch, comm.* between
// ranks, syncall, cross-core events and the pipes of a mixed task, and the ordering ops that need nothing.
#include "kernel_decoder.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "pypto/ir/op_registry.h"

namespace pypto::sim::decode {

namespace {

// The runtime's split of a pipe op's `split` code: 1 and 3 cut tiles into upper and lower halves,
// 2 and 4 into left and right ones (3 and 4 name an odd extent; the cut is the same).
rt::PipeSplit PipeSplitOf(int64_t code) {
  if (code == 1 || code == 3) return rt::PipeSplit::UpDown;
  if (code == 2 || code == 4) return rt::PipeSplit::LeftRight;
  return rt::PipeSplit::Whole;
}

}  // namespace

// pl.prefetch.*: the simulator has no L2 cache to warm, so a prefetch is complete as soon as it
// starts; the context, event and session carry nothing, and a wait reports completion (true).
pypto::expected<void, std::string> Decoder::DecodePrefetch(std::string_view op, const ir::VarPtr& target) {
  if (op == "prefetch.wait" && target) values_[target.get()] = ScalarValue{Operand::Imm(1)};
  return {};
}

// Communication between ranks (comm.*: the pld ops of a distributed chip kernel). The window's
// communication domain, and so this rank and its peers, is found when the instruction runs, from
// the address of the tensor it is handed (comm_exec.cpp).
pypto::expected<void, std::string> Decoder::DecodeComm(const std::string& op, const ir::VarPtr& target,
                                                       const ir::Call& call) {
  if (op == "comm.remote_load" || op == "comm.remote_store")
    return DecodeRemoteTransfer(op == "comm.remote_load", target, call);
  auto tensor = Tensor(call.args()[0], "window of a comm op");
  if (!tensor) return Error(tensor.error());
  Instr instr;
  instr.op = Opcode::Comm;
  instr.tensor_slot = (*tensor)->slot;
  instr.rt_dtype = (*tensor)->rt_dtype;
  instr.rank = static_cast<uint8_t>((*tensor)->shape.size());
  if (op == "comm.rank" || op == "comm.nranks") {
    if (!target) return {};
    instr.comm.kind = op == "comm.rank" ? CommKind::Rank : CommKind::Nranks;
    const uint32_t reg = NewRegister(target->name_hint(), op == "comm.rank" ? "rank" : "rank count");
    instr.scalar_dst = static_cast<int32_t>(reg);
    values_[target.get()] = ScalarValue{Operand::Reg(reg)};
    if (loop_depth_ > 0) loop_scalars_.push_back(target.get());
    Emit(instr);
    return {};
  }
  instr.elem_bytes = sizeof(int32_t);
  if (op == "comm.barrier") {
    instr.comm.kind = CommKind::Barrier;
    if (target) values_[target.get()] = values_.at(call.args()[0]->As<ir::Var>());
    Emit(instr);
    return {};
  }
  const bool notify = op == "comm.notify";
  if (!notify && op != "comm.wait") return Fail(fmt::format("the simulator does not run '{}' yet", op));
  const ir::ExprPtr& cell = call.args()[notify ? 2 : 1];
  auto offsets = Offsets(cell, "signal cell");
  if (!offsets) return Error(offsets.error());
  if (auto ok = CheckRegion(**tensor, *offsets, cell, ir::Shape(offsets->size(), 1), instr); !ok) return ok;
  auto value = Scalar(call.args()[notify ? 3 : 2]);
  if (!value) return Error(value.error());
  instr.comm.value = *value;
  if (notify) {
    auto peer = Scalar(call.args()[1]);
    if (!peer) return Error(peer.error());
    instr.comm.kind = CommKind::Notify;
    instr.comm.peer = *peer;
    instr.comm.atomic_add = ir::FindAttr<std::string>(call.kwargs(), "op") == std::optional<std::string>("AtomicAdd");
  } else {
    static constexpr std::array<std::string_view, 6> kCmps = {"Eq", "Ne", "Gt", "Ge", "Lt", "Le"};
    const auto cmp = ir::FindAttr<std::string>(call.kwargs(), "cmp").value_or("Eq");
    instr.comm.kind = CommKind::Wait;
    instr.comm.cmp = static_cast<WaitCmp>(std::ranges::find(kCmps, cmp) - kCmps.begin());
  }
  Emit(instr);
  return {};
}

// remote_load / remote_store: the local load / store of the same region, run on the peer's copy
// of the window.
pypto::expected<void, std::string> Decoder::DecodeRemoteTransfer(bool load, const ir::VarPtr& target,
                                                                 const ir::Call& call) {
  if (load && !target) return {};  // a read nobody uses
  const auto& args = call.args();
  auto peer = Scalar(args[load ? 1 : 2]);
  if (!peer) return Error(peer.error());
  auto local = load ? ir::OpRegistry::Get().CreateCall("tile.load", {args[0], args[2], args[3]}, {}, call.span())
                    : ir::OpRegistry::Get().CreateCall("tile.store", {args[0], args[3], args[1]}, call.kwargs(),
                                                       call.span());
  if (!local) return Fail(local.error().message);
  const size_t before = kernel_.code.size();
  if (auto ok = load ? DecodeLoad(target, **local) : DecodeStore(nullptr, **local); !ok) return ok;
  if (kernel_.code.size() != before + 1) return Fail("a remote transfer decoded into more than one instruction");
  kernel_.code.back().remote = true;
  kernel_.code.back().comm.peer = *peer;
  return {};
}

// `pl.system.syncall(...)`: hard and soft barriers are one here (the gm_workspace of a soft one is
// the device's counter; the simulator's barrier is the runtime's), so neither mode nor workspace is kept.
pypto::expected<void, std::string> Decoder::DecodeSyncAll() {
  Instr instr;
  instr.op = Opcode::SyncAll;
  Emit(instr);
  return {};
}

// `pl.system.sync_set(id, pipe=..., ffts_mode=...)` / `sync_wait(id, pipe=...)`: a cross-core
// event of the mixed task (the runtime's). The pipe only says which of the core's pipes raises or
// waits, and the simulator runs them in program order. A set without ffts_mode joins the AIC and AIV
// of the group (mode 2), what a mixed kernel's events are for.
pypto::expected<void, std::string> Decoder::DecodeEvent(bool set, const ir::Call& call) {
  auto id = Scalar(call.args()[0]);
  if (!id) return Error(id.error());
  Instr instr;
  instr.op = set ? Opcode::EventSet : Opcode::EventWait;
  instr.event_id = *id;
  instr.event.mode = static_cast<int32_t>(ir::FindAttr<int64_t>(call.kwargs(), "ffts_mode").value_or(2));
  Emit(instr);
  return {};
}

// Ops that order a core's own pipes or its view of global memory (pl.system.sync_src/sync_dst,
// bar_v/bar_m/bar_all, fence, cacheinvalid), or hand the FFTS unit its scratch (set_ffts): the
// simulator runs every instruction of a core in program order, its stores reach global memory
// before the next instruction and it caches nothing, so each of them already holds.
bool Decoder::RunsInProgramOrderHere(std::string_view op) {
  static constexpr std::array<std::string_view, 8> kOps = {"system.set_ffts", "system.sync_src", "system.sync_dst",
                                                          "system.bar_v",    "system.bar_m",    "system.bar_all",
                                                          "system.fence",    "system.cacheinvalid"};
  return std::ranges::find(kOps, op) != kOps.end();
}

// `pl.aic_initialize_pipe(...)`: the slot buffers are the device's; what the simulator keeps is the
// ring's depth, for the pipe ops of this id that follow (upstream's defaults: 8 slots for a pipe of
// one direction, 4 for one of both).
pypto::expected<void, std::string> Decoder::DecodeInitPipe(const ir::Call& call) {
  const int64_t id = ir::FindAttr<int64_t>(call.kwargs(), "id").value_or(0);
  const int64_t dir_mask = ir::FindAttr<int64_t>(call.kwargs(), "dir_mask").value_or(1);
  pipe_slots_[id] = ir::FindAttr<int64_t>(call.kwargs(), "slot_num").value_or(dir_mask == 3 ? 4 : 8);
  return {};
}

// tpush/tpop/tfree: which pipe (id, direction, how the AIV lanes split its tiles), and the tile
// pushed or popped with its shape, by which a split pipe cuts it.
pypto::expected<void, std::string> Decoder::DecodePipeOp(const std::string& op, const ir::VarPtr& target,
                                                         const ir::Call& call) {
  Instr instr;
  const int64_t id = ir::FindAttr<int64_t>(call.kwargs(), "id").value_or(0);
  const auto slots = pipe_slots_.find(id);
  // The AIC-to-AIV pipe is the one tpush_to_aiv fills, tpop_from_aic empties and tfree_to_aic frees.
  const bool to_aiv = op == "tile.tpush_to_aiv" || op == "tile.tpop_from_aic" || op == "system.tfree_to_aic";
  instr.pipe = rt::PipeRef{
      .id = static_cast<int32_t>(id),
      .direction = to_aiv ? rt::PipeDirection::AicToAiv : rt::PipeDirection::AivToAic,
      .slots = static_cast<int32_t>(slots == pipe_slots_.end() ? kDefaultPipeSlots : slots->second),
      .split = PipeSplitOf(ir::FindAttr<int64_t>(call.kwargs(), "split").value_or(0))};
  if (op.starts_with("tile.tpush")) {
    auto tile = Tile(call.args()[0], "tile pushed");
    if (!tile) return Error(tile.error());
    instr.op = Opcode::TPush;
    instr.src0 = tile->ref;
    instr.pipe.rows = tile->rows();
    instr.pipe.cols = tile->cols();
  } else if (op.starts_with("tile.tpop")) {
    auto tile = ResultTile(target, op.c_str());
    if (!tile) return Error(tile.error());
    values_[target.get()] = *tile;
    instr.op = Opcode::TPop;
    instr.dst = tile->ref;
    instr.pipe.rows = tile->rows();
    instr.pipe.cols = tile->cols();
  } else {
    instr.op = Opcode::TFree;
  }
  Emit(instr);
  return {};
}

}  // namespace pypto::sim::decode
