// The communication ops of a distributed kernel, written as upstream pypto's PTO emitter writes them
// (hw-native-sys/pypto e2d0f78ae, src/backend/common/pto_ops_distributed.cpp; no PTOAS revision
// available defines pto.comm.*, so tools/pto-check holds them as a separate source):
//
// - Every window a comm op reaches peers through comes with its CommContext, a `!pto.ptr<i64>`
//   argument after the scalars. The runtime's CommContext holds (rankId, rankNum) as the two i32
//   halves of its u64 slot 2 and each rank's window base address in windowsIn[], from slot 4 on
//   (upstream's comm_layout.h pins those offsets).
// - A peer's copy of a window region is the local window pointer moved by the difference of the two
//   ranks' window bases (pto.addptr, in elements), viewed like the window (make_tensor_view) and
//   partitioned at the op's offsets: remote_load is a pto.tload from it, remote_store a pto.tstore
//   into it (atomicType atomic_add for atomic="add").
// - notify is pto.comm.tnotify of the peer's one-cell partition, after a pto.barrier <PIPE_ALL> so
//   the peer sees the signal only after every earlier store of this core has landed; wait is
//   pto.comm.twait of this rank's own cell. Their values are i32, as the comm ISA's signal is.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "kernel_emitter.h"
#include "mlir_types.h"

namespace pypto::backend_ptoas {

namespace {

constexpr int64_t kRankPairSlot = 2;   // CommContext: (rankId, rankNum), u64 slot 2 (byte 16)
constexpr int64_t kWindowsInSlot = 4;  // CommContext: windowsIn[rank], from u64 slot 4 (byte 32)

// A tile's window in a tensor of `rank` dimensions, as a tile.load's or tile.store's: [16, 64] in a
// 3-D window is [1, 16, 64], [1, 16, 64] in a 2-D one [16, 64].
ir::Shape WindowSizes(ir::Shape sizes, const ir::ExprPtr& offsets) {
  const size_t rank = offsets->As<ir::TupleLiteral>()->elements().size();
  while (sizes.size() < rank) sizes.insert(sizes.begin(), 1);
  while (sizes.size() > rank && sizes.front() == 1) sizes.erase(sizes.begin());
  return sizes;
}

std::string Lower(std::string_view name) {
  std::string out(name);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

void KernelEmitter::LowerComm(const ir::Call& call, const ir::AssignStmt* assign, const ir::Span& span) {
  const std::string& op = call.target_name();
  if (op == "comm.rank" || op == "comm.nranks") {
    indices_[assign->var().get()] = CommRank(call, assign->var()->name_hint(), span);
    return;
  }
  if (op == "comm.notify") return LowerNotify(call, span);
  if (op == "comm.wait") return LowerWait(call, span);
  if (op == "comm.barrier") return LowerBarrier(call, span);
  if (op == "comm.remote_load") {
    const ir::Var& window = *plan_.tensor_param_of.at(call.args()[0]->As<ir::Var>());
    const ir::Shape sizes = WindowSizes(assign->var()->type()->As<ir::TileType>()->shape(), call.args()[2]);
    TypedValue peer = PeerWindow(window, call.args()[1], call.args()[2], sizes, span);
    TypedValue tile{values_.at(assign->var().get()), TileOperandType(*assign->var())};
    Add(body_, DpsOp("pto.tload", {peer}, tile), span);
    return;
  }
  // comm.remote_store
  const auto& tile = *call.args()[0]->As<ir::Var>();
  const ir::Var& window = *plan_.tensor_param_of.at(call.args()[1]->As<ir::Var>());
  const ir::Shape sizes = WindowSizes(tile.type()->As<ir::TileType>()->shape(), call.args()[3]);
  TypedValue peer = PeerWindow(window, call.args()[2], call.args()[3], sizes, span);
  PtoOp store = DpsOp("pto.tstore", {{values_.at(&tile), TileOperandType(tile)}}, peer);
  if (ir::FindAttr<std::string>(call.kwargs(), "atomic") == "add")
    store.attrs = {{"atomicType", "#pto<atomic_type atomic_add>"}};
  Add(body_, store, span);
}

// `%raw = pto.load_scalar %ctx[%slot] : !pto.ptr<i64> -> i64`: one u64 slot of a window's CommContext.
std::string KernelEmitter::LoadContextSlot(const ir::Var& window, const std::string& slot, const ir::Span& span) {
  const TypedValue context{comm_contexts_.at(&window), PtrType("i64")};
  const TypedValue raw{names_.Temp(), "i64"};
  PtoOp op{.name = "pto.load_scalar", .result = raw};
  op.custom_syntax =
      fmt::format("{} = pto.load_scalar {}[{}] : {} -> i64", raw.value, context.value, slot, context.type);
  op.generic_operands = GenericOperands{{{context}, {{slot, "index"}}}};
  Add(body_, op, span);
  return raw.value;
}

// comm.rank: the low i32 half of the (rankId, rankNum) slot; comm.nranks: the high half.
std::string KernelEmitter::CommRank(const ir::Call& call, const std::string& name, const ir::Span& span) {
  const ir::Var& window = *plan_.tensor_param_of.at(call.args()[0]->As<ir::Var>());
  std::string pair = LoadContextSlot(window, IndexConstant(kRankPairSlot).value, span);
  if (call.target_name() == "comm.nranks") {
    std::string high = names_.Temp();
    Add(body_, fmt::format("{} = arith.shrui {}, {} : i64", high, pair, names_.Constant(32, "i64")), span);
    pair = high;
  }
  std::string half = names_.Temp();
  Add(body_, fmt::format("{} = arith.trunci {} : i64 to i32", half, pair), span);
  std::string value = names_.Named(name);
  Add(body_, fmt::format("{} = arith.index_cast {} : i32 to index", value, half), span);
  return value;
}

// (windowsIn[peer] - windowsIn[rankId]) / element bytes: how many elements the peer's copy of the
// window is from this rank's, for pto.addptr.
std::string KernelEmitter::PeerOffset(const ir::Var& window, const std::string& peer, const ir::Span& span) {
  const std::string windows = IndexConstant(kWindowsInSlot).value;
  std::string pair = LoadContextSlot(window, IndexConstant(kRankPairSlot).value, span);
  std::string rank_i32 = names_.Temp();
  Add(body_, fmt::format("{} = arith.trunci {} : i64 to i32", rank_i32, pair), span);
  std::string rank = names_.Temp();
  Add(body_, fmt::format("{} = arith.index_cast {} : i32 to index", rank, rank_i32), span);
  std::string own = LoadContextSlot(window, Arith("arith.addi", windows, rank, span), span);
  std::string theirs = LoadContextSlot(window, Arith("arith.addi", windows, peer, span), span);
  std::string bytes = names_.Temp();
  Add(body_, fmt::format("{} = arith.subi {}, {} : i64", bytes, theirs, own), span);
  const int64_t element_bytes = ir::DataTypeBits(window.type()->As<ir::TensorType>()->dtype()) / 8;
  std::string elements = names_.Temp();
  Add(body_, fmt::format("{} = arith.divsi {}, {} : i64", elements, bytes, names_.Constant(element_bytes, "i64")),
      span);
  std::string offset = names_.Temp();
  Add(body_, fmt::format("{} = arith.index_cast {} : i64 to index", offset, elements), span);
  return offset;
}

// The partition [offsets, offsets + sizes) of the peer's copy of `window`.
TypedValue KernelEmitter::PeerWindow(const ir::Var& window, const ir::ExprPtr& peer, const ir::ExprPtr& offsets,
                                     const ir::Shape& sizes, const ir::Span& span) {
  const std::string peer_index = IndexValue(peer, span);
  std::vector<std::string> at;
  for (const auto& offset : offsets->As<ir::TupleLiteral>()->elements()) at.push_back(IndexValue(offset, span));
  return PeerWindowAt(window, peer_index, at, sizes, span);
}

TypedValue KernelEmitter::PeerWindowAt(const ir::Var& window, const std::string& peer,
                                       const std::vector<std::string>& offsets, const ir::Shape& sizes,
                                       const ir::Span& span) {
  const std::string element = ElementOf(window.type()->As<ir::TensorType>()->dtype());
  std::string delta = PeerOffset(window, peer, span);
  const TypedValue local{values_.at(&window), PtrType(element)};
  const TypedValue moved{names_.Named(window.name_hint() + "_peer_ptr"), PtrType(element)};
  PtoOp addptr{.name = "pto.addptr", .result = moved};
  addptr.custom_syntax =
      fmt::format("{} = pto.addptr {}, {} : {} -> {}", moved.value, local.value, delta, local.type, moved.type);
  addptr.generic_operands = GenericOperands{{{local}, {{delta, "index"}}}};
  Add(body_, addptr, span);
  PtoOp view = TensorView(window, moved, names_.Named(window.name_hint() + "_peer_view"));
  Add(body_, view, span);
  std::string partition_type = PartitionViewType(sizes, element);
  return {PartitionViewAt(*view.result, window.name_hint() + "_peer", offsets, sizes, partition_type, span),
          partition_type};
}

// A notify's value or a wait's expected value, as the i32 the signal cell holds.
TypedValue KernelEmitter::SignalValue(const ir::ExprPtr& value, const ir::Span& span) {
  if (auto constant = ir::AsConstInt(value)) return {names_.Constant(*constant, "i32"), "i32"};
  const std::string index = IndexValue(value, span);
  std::string narrowed = names_.Temp();
  Add(body_, fmt::format("{} = arith.index_cast {} : index to i32", narrowed, index), span);
  return {narrowed, "i32"};
}

void KernelEmitter::LowerNotify(const ir::Call& call, const ir::Span& span) {
  const ir::Var& window = *plan_.tensor_param_of.at(call.args()[0]->As<ir::Var>());
  const ir::Shape cell(window.type()->As<ir::TensorType>()->shape().size(), 1);
  TypedValue signal = PeerWindow(window, call.args()[1], call.args()[2], cell, span);
  TypedValue value = SignalValue(call.args()[3], span);
  const bool add = ir::FindAttr<std::string>(call.kwargs(), "op") == "AtomicAdd";
  EmitNotify(signal, value, add ? "atomic_add" : "set", span);
}

void KernelEmitter::EmitNotify(const TypedValue& cell, const TypedValue& value, const std::string& mode,
                               const ir::Span& span) {
  PtoOp barrier{.name = "pto.barrier", .attrs = {{"pipe", "#pto.pipe<PIPE_ALL>"}}};
  barrier.custom_syntax = "pto.barrier <PIPE_ALL>";
  barrier.generic_operands = GenericOperands{};
  Add(body_, barrier, span);
  PtoOp notify{.name = "pto.comm.tnotify", .attrs = {{"notifyOp", fmt::format("#pto<notify_op {}>", mode)}}};
  notify.custom_syntax = fmt::format("pto.comm.tnotify({}, {} : {}, i32) {{notifyOp = #pto<notify_op {}>}}",
                                     cell.value, value.value, cell.type, mode);
  notify.generic_operands = GenericOperands{{{cell}, {value}}};
  Add(body_, notify, span);
}

void KernelEmitter::LowerWait(const ir::Call& call, const ir::Span& span) {
  const auto& signal_var = *call.args()[0]->As<ir::Var>();
  const ir::Var& window = *plan_.tensor_param_of.at(&signal_var);
  const ir::Shape cell(window.type()->As<ir::TensorType>()->shape().size(), 1);
  const std::string partition_type = PartitionViewType(cell, ElementOf(ir::DataType::INT32));
  TypedValue signal{PartitionView(signal_var, call.args()[1], cell, partition_type, span), partition_type};
  TypedValue expected = SignalValue(call.args()[2], span);
  EmitWait(signal, expected, Lower(ir::FindAttr<std::string>(call.kwargs(), "cmp").value_or("Ge")), span);
}

void KernelEmitter::EmitWait(const TypedValue& cell, const TypedValue& expected, const std::string& cmp,
                             const ir::Span& span) {
  PtoOp wait{.name = "pto.comm.twait", .attrs = {{"cmp", fmt::format("#pto<wait_cmp {}>", cmp)}}};
  wait.custom_syntax = fmt::format("pto.comm.twait({}, {} : {}, i32) {{cmp = #pto<wait_cmp {}>}}", cell.value,
                                   expected.value, cell.type, cmp);
  wait.generic_operands = GenericOperands{{{cell}, {expected}}};
  Add(body_, wait, span);
}

// comm.barrier, in notifies and waits, as the simulator runs it (plugins/sim/src/comm_exec.cpp):
// a credit into this rank's cell of every peer's signal, then, peer by peer, a wait for the peer's
// credit in this rank's own signal and the credit taken back, so the cells are left as they were.
// (Upstream rewrites pld.tensor.barrier into notifies and waits of its own protocol before its emitter
// runs; these are the same two instructions.)
void KernelEmitter::LowerBarrier(const ir::Call& call, const ir::Span& span) {
  const auto& signal_var = *call.args()[0]->As<ir::Var>();
  const ir::Var& window = *plan_.tensor_param_of.at(&signal_var);
  const auto* type = window.type()->As<ir::TensorType>();
  const std::string pair = LoadContextSlot(window, IndexConstant(kRankPairSlot).value, span);
  auto half = [&](const std::string& bits, const std::string& name) {
    std::string narrow = names_.Temp();
    Add(body_, fmt::format("{} = arith.trunci {} : i64 to i32", narrow, bits), span);
    std::string value = names_.Named(name);
    Add(body_, fmt::format("{} = arith.index_cast {} : i32 to index", value, narrow), span);
    return value;
  };
  const std::string me = half(pair, "barrier_rank");
  std::string high = names_.Temp();
  Add(body_, fmt::format("{} = arith.shrui {}, {} : i64", high, pair, names_.Constant(32, "i64")), span);
  const std::string ranks = half(high, "barrier_ranks");
  const ir::Shape ones(type->shape().size(), 1);
  auto cell_of = [&](const std::string& rank) {  // [rank] or [rank, 0]
    std::vector<std::string> at{rank};
    if (ones.size() == 2) at.push_back(IndexConstant(0).value);
    return at;
  };
  // `body(peer)` for every peer other than this rank.
  auto each_peer = [&](const auto& body) {
    std::string peer = names_.Named("peer");
    AddStructural(fmt::format("scf.for {} = {} to {} step {} {{", peer, IndexConstant(0).value, ranks,
                              IndexConstant(1).value));
    ++depth_;
    std::string other = names_.Temp();
    Add(body_, fmt::format("{} = arith.cmpi ne, {}, {} : index", other, peer, me), span);
    AddStructural(fmt::format("scf.if {} {{", other));
    ++depth_;
    body(peer);
    --depth_;
    AddStructural("}");
    --depth_;
    AddStructural("}");
  };
  const TypedValue one{names_.Constant(1, "i32"), "i32"};
  each_peer([&](const std::string& peer) {
    EmitNotify(PeerWindowAt(window, peer, cell_of(me), ones, span), one, "atomic_add", span);
  });
  const std::string cell_type = PartitionViewType(ones, ElementOf(ir::DataType::INT32));
  const TypedValue view{views_.at(&window), TensorViewType(ones.size(), ElementOf(ir::DataType::INT32))};
  const TypedValue minus_one{names_.Constant(-1, "i32"), "i32"};
  each_peer([&](const std::string& peer) {
    const TypedValue own{PartitionViewAt(view, window.name_hint(), cell_of(peer), ones, cell_type, span), cell_type};
    EmitWait(own, one, "ge", span);
    EmitNotify(PeerWindowAt(window, me, cell_of(peer), ones, span), minus_one, "atomic_add", span);
  });
}

}  // namespace pypto::backend_ptoas
