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
  const std::string element = ElementOf(window.type()->As<ir::TensorType>()->dtype());
  std::string delta = PeerOffset(window, IndexValue(peer, span), span);
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
  return {PartitionViewOf(*view.result, window.name_hint() + "_peer", offsets, sizes, partition_type, span),
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
  PtoOp barrier{.name = "pto.barrier", .attrs = {{"pipe", "#pto.pipe<PIPE_ALL>"}}};
  barrier.custom_syntax = "pto.barrier <PIPE_ALL>";
  barrier.generic_operands = GenericOperands{};
  Add(body_, barrier, span);
  const std::string mode = ir::FindAttr<std::string>(call.kwargs(), "op") == "AtomicAdd" ? "atomic_add" : "set";
  PtoOp notify{.name = "pto.comm.tnotify", .attrs = {{"notifyOp", fmt::format("#pto<notify_op {}>", mode)}}};
  notify.custom_syntax = fmt::format("pto.comm.tnotify({}, {} : {}, i32) {{notifyOp = #pto<notify_op {}>}}",
                                     signal.value, value.value, signal.type, mode);
  notify.generic_operands = GenericOperands{{{signal}, {value}}};
  Add(body_, notify, span);
}

void KernelEmitter::LowerWait(const ir::Call& call, const ir::Span& span) {
  const auto& signal_var = *call.args()[0]->As<ir::Var>();
  const ir::Var& window = *plan_.tensor_param_of.at(&signal_var);
  const ir::Shape cell(window.type()->As<ir::TensorType>()->shape().size(), 1);
  const std::string partition_type = PartitionViewType(cell, ElementOf(ir::DataType::INT32));
  TypedValue signal{PartitionView(signal_var, call.args()[1], cell, partition_type, span), partition_type};
  TypedValue expected = SignalValue(call.args()[2], span);
  const std::string cmp = Lower(ir::FindAttr<std::string>(call.kwargs(), "cmp").value_or("Ge"));
  PtoOp wait{.name = "pto.comm.twait", .attrs = {{"cmp", fmt::format("#pto<wait_cmp {}>", cmp)}}};
  wait.custom_syntax = fmt::format("pto.comm.twait({}, {} : {}, i32) {{cmp = #pto<wait_cmp {}>}}", signal.value,
                                   expected.value, signal.type, cmp);
  wait.generic_operands = GenericOperands{{{signal}, {expected}}};
  Add(body_, wait, span);
}

}  // namespace pypto::backend_ptoas
