#include "comm_exec.h"
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "kernel_abort.h"
#include "kernel_failure.h"
#include "pypto/runtime/comm_domain.h"

namespace pypto::sim {
namespace {

using Result = pypto::expected<void, rt::FatalError>;

std::string WindowName(const DecodedKernel& kernel, uint32_t slot) {
  for (const auto& param : kernel.params)
    if (param.is_tensor && param.slot == slot) return fmt::format("'{}'", param.name);
  return fmt::format("args[{}]", slot);
}

inline int64_t Read(const Operand& operand, const int64_t* regs) {
  return operand.is_reg() ? regs[operand.reg] : operand.imm;
}

// How long a wait (or a barrier) may block before the run fails: a peer that never notifies would
// otherwise hang the program. $PYPTO_SIM_COMM_TIMEOUT_S overrides the default of 60 seconds.
std::chrono::milliseconds WaitLimit() {
  const char* text = std::getenv("PYPTO_SIM_COMM_TIMEOUT_S");
  const double seconds = text ? std::atof(text) : 0;
  return std::chrono::milliseconds(seconds > 0 ? static_cast<int64_t>(seconds * 1000) : 60'000);
}

// The window tensor's descriptor and where it lies in its communication domain.
struct Window {
  const rt::ChipTensor* tensor;
  rt::CommPlace place;
};

pypto::expected<Window, rt::FatalError> WindowOf(const DecodedKernel& kernel, size_t index, const int64_t* args) {
  const Instr& instr = kernel.code[index];
  const auto* tensor = reinterpret_cast<const rt::ChipTensor*>(args[instr.tensor_slot]);
  if (!tensor) return KernelFailure(kernel, index,
                                    fmt::format("{} is a null descriptor", WindowName(kernel, instr.tensor_slot)));
  auto place = rt::FindCommPlace(static_cast<uintptr_t>(tensor->buffer_addr));
  if (!place)
    return KernelFailure(kernel, index,
                         fmt::format("{} is not in a window of a distributed program: comm ops take the "
                                     "pld.window(...) views a @pl.jit.host function passes (pld.DistributedTensor "
                                     "parameters)",
                                     WindowName(kernel, instr.tensor_slot)));
  return Window{tensor, *place};
}

pypto::expected<int32_t, rt::FatalError> PeerOf(const DecodedKernel& kernel, size_t index, const Window& window,
                                                const int64_t* regs) {
  const int64_t peer = Read(kernel.code[index].comm.peer, regs);
  if (peer < 0 || peer >= window.place.nranks())
    return KernelFailure(kernel, index,
                         fmt::format("peer {} is not a rank of the communication domain (ranks 0 to {})", peer,
                                     window.place.nranks() - 1));
  return static_cast<int32_t>(peer);
}

// The byte offset of the cell at `offsets` from the window tensor's buffer, checked against its view.
pypto::expected<uint64_t, rt::FatalError> CellOffset(const DecodedKernel& kernel, size_t index,
                                                     const rt::ChipTensor& tensor, const int64_t* offsets) {
  const Instr& instr = kernel.code[index];
  uint64_t element = tensor.start_offset;
  for (int d = 0; d < instr.rank; ++d) {
    if (offsets[d] < 0 || offsets[d] >= static_cast<int64_t>(tensor.shapes[d]))
      return KernelFailure(kernel, index,
                           fmt::format("signal cell [{}] is outside {} of shape [{}]",
                                       fmt::join(std::span(offsets, instr.rank), ", "),
                                       WindowName(kernel, instr.tensor_slot),
                                       fmt::join(std::span(tensor.shapes, tensor.ndims), ", ")));
    element += static_cast<uint64_t>(offsets[d]) * tensor.strides[d];
  }
  return element * sizeof(int32_t);
}

std::atomic_ref<int32_t> CellAt(uintptr_t address) {
  return std::atomic_ref<int32_t>(*reinterpret_cast<int32_t*>(address));
}

// The domain's signal cells, each `offset` bytes into a rank's window: atomics on this process's
// memory in an in-process domain, the transport's atomics where the ranks are processes (every
// update then goes through it, the rank's own included, so no two kinds of atomic meet on a cell).
class Cells {
 public:
  explicit Cells(const rt::CommPlace& place) : place_(place), transport_(place.transport()) {}

  void Store(int32_t rank, uint64_t offset, int32_t value) const {
    if (transport_) transport_->StoreCell(rank, offset, value);
    else CellAt(place_.domain->windows[static_cast<size_t>(rank)] + offset).store(value);
  }
  void Add(int32_t rank, uint64_t offset, int32_t value) const {
    if (transport_) transport_->AddCell(rank, offset, value);
    else CellAt(place_.domain->windows[static_cast<size_t>(rank)] + offset).fetch_add(value);
  }
  // This rank's own cell, for polling.
  int32_t LoadOwn(uint64_t offset) const {
    if (!transport_) return CellAt(place_.domain->windows[static_cast<size_t>(place_.rank)] + offset).load();
    transport_->Progress();
    return transport_->LoadOwnCell(offset);
  }

 private:
  const rt::CommPlace& place_;
  rt::CommTransport* transport_;
};

bool Compare(WaitCmp cmp, int32_t value, int64_t expected) {
  switch (cmp) {
    case WaitCmp::Eq: return value == expected;
    case WaitCmp::Ne: return value != expected;
    case WaitCmp::Gt: return value > expected;
    case WaitCmp::Ge: return value >= expected;
    case WaitCmp::Lt: return value < expected;
    case WaitCmp::Le: return value <= expected;
  }
  return false;
}

const char* CmpText(WaitCmp cmp) {
  static constexpr const char* kText[] = {"==", "!=", ">", ">=", "<", "<="};
  return kText[static_cast<int>(cmp)];
}

// Spins (yielding) until `done()` or the time limit; false on time-out.
template <typename Done>
bool BlockUntil(Done done, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (uint32_t spin = 0; !done(); ++spin) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    NotePeerWait();
    if (spin < 64) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return true;
}

Result Notify(const DecodedKernel& kernel, size_t index, const Window& window, const int64_t* offsets,
              const int64_t* regs) {
  const Instr& instr = kernel.code[index];
  auto peer = PeerOf(kernel, index, window, regs);
  if (!peer) return pypto::unexpected(peer.error());
  auto cell = CellOffset(kernel, index, *window.tensor, offsets);
  if (!cell) return pypto::unexpected(cell.error());
  const Cells cells(window.place);
  const uint64_t at = window.place.offset + *cell;
  const auto value = static_cast<int32_t>(Read(instr.comm.value, regs));
  if (instr.comm.atomic_add) cells.Add(*peer, at, value);
  else cells.Store(*peer, at, value);
  return {};
}

Result Wait(const DecodedKernel& kernel, size_t index, const Window& window, const int64_t* offsets,
            const int64_t* regs) {
  const Instr& instr = kernel.code[index];
  auto cell = CellOffset(kernel, index, *window.tensor, offsets);
  if (!cell) return pypto::unexpected(cell.error());
  const Cells cells(window.place);
  const uint64_t at = window.place.offset + *cell;
  const int64_t expected = Read(instr.comm.value, regs);
  const auto limit = WaitLimit();
  if (BlockUntil([&] { return Compare(instr.comm.cmp, cells.LoadOwn(at), expected); }, limit)) return {};
  return KernelFailure(kernel, index,
                       fmt::format("rank {} waited {} s for signal {}[{}] {} {}, but it holds {}: no peer notified it "
                                   "(PYPTO_SIM_COMM_TIMEOUT_S sets the limit)",
                                   window.place.rank, limit.count() / 1000.0, WindowName(kernel, instr.tensor_slot),
                                   fmt::join(std::span(offsets, instr.rank), ", "), CmpText(instr.comm.cmp), expected,
                                   cells.LoadOwn(at)));
}

// Each rank adds a credit to its own cell of every peer's signal window, then waits for a credit
// from every peer in its own window and takes it back, leaving the cells as it found them (so the
// signal serves the next barrier too, even when a fast peer already arrived there).
Result Barrier(const DecodedKernel& kernel, size_t index, const Window& window) {
  const Instr& instr = kernel.code[index];
  const rt::ChipTensor& tensor = *window.tensor;
  const int32_t me = window.place.rank;
  const int32_t nranks = window.place.nranks();
  if (static_cast<int64_t>(tensor.shapes[0]) < nranks)
    return KernelFailure(kernel, index,
                         fmt::format("the barrier's signal {} has {} cells but the domain has {} ranks",
                                     WindowName(kernel, instr.tensor_slot), tensor.shapes[0], nranks));
  auto cell_offset = [&](int32_t rank) {
    return (tensor.start_offset + static_cast<uint64_t>(rank) * tensor.strides[0]) * sizeof(int32_t);
  };
  const Cells cells(window.place);
  const uint64_t mine = window.place.offset + cell_offset(me);
  for (int32_t peer = 0; peer < nranks; ++peer)
    if (peer != me) cells.Add(peer, mine, 1);
  const auto limit = WaitLimit();
  for (int32_t peer = 0; peer < nranks; ++peer) {
    if (peer == me) continue;
    const uint64_t credit = window.place.offset + cell_offset(peer);
    if (!BlockUntil([&] { return cells.LoadOwn(credit) >= 1; }, limit))
      return KernelFailure(kernel, index,
                           fmt::format("rank {} waited {} s at the barrier on {} for rank {}, which never arrived "
                                       "(PYPTO_SIM_COMM_TIMEOUT_S sets the limit)",
                                       me, limit.count() / 1000.0, WindowName(kernel, instr.tensor_slot), peer));
    cells.Add(me, credit, -1);
  }
  return {};
}

}  // namespace

Result RunComm(const DecodedKernel& kernel, size_t index, const int64_t* args, const int64_t* offsets, int64_t* regs) {
  const Instr& instr = kernel.code[index];
  auto window = WindowOf(kernel, index, args);
  if (!window) return pypto::unexpected(window.error());
  switch (instr.comm.kind) {
    case CommKind::Rank: regs[instr.scalar_dst] = window->place.rank; return {};
    case CommKind::Nranks: regs[instr.scalar_dst] = window->place.nranks(); return {};
    case CommKind::Notify: return Notify(kernel, index, *window, offsets, regs);
    case CommKind::Wait: return Wait(kernel, index, *window, offsets, regs);
    case CommKind::Barrier: return Barrier(kernel, index, *window);
  }
  return {};
}

namespace {

// The bytes of the window tensor a remote transfer may touch, from its buffer start: the region at
// `offsets` of the instruction's shape, or the whole view where that is not inside it (gathers and
// scatters pick their elements at run time; a region leaving the view is reported by the transfer
// itself, before it touches memory).
struct Span {
  uint64_t begin = 0, end = 0;
};

std::optional<Span> SpanOf(const rt::ChipTensor& tensor, size_t elem_bytes, const int64_t* origin,
                           const int64_t* extent) {
  uint64_t first = tensor.start_offset, last = 0;
  for (uint32_t d = 0; d < tensor.ndims; ++d) {
    const auto shape = static_cast<int64_t>(tensor.shapes[d]);
    if (extent[d] <= 0 || origin[d] < 0 || origin[d] > shape - extent[d]) return std::nullopt;
    first += static_cast<uint64_t>(origin[d]) * tensor.strides[d];
    last += static_cast<uint64_t>(extent[d] - 1) * tensor.strides[d];
  }
  return Span{first * elem_bytes, (first + last + 1) * elem_bytes};
}

Span TouchedSpan(const Instr& instr, const rt::ChipTensor& tensor, const int64_t* offsets) {
  const bool picks_at_run_time = instr.scatter || instr.paged.on || instr.mgather.on;
  if (!picks_at_run_time && instr.rank == static_cast<int>(tensor.ndims))
    if (auto region = SpanOf(tensor, instr.elem_bytes, offsets, instr.shape.data())) return *region;
  int64_t zeros[PYPTO_MAX_TENSOR_DIMS] = {};
  int64_t shape[PYPTO_MAX_TENSOR_DIMS] = {};
  for (uint32_t d = 0; d < tensor.ndims; ++d) shape[d] = static_cast<int64_t>(tensor.shapes[d]);
  return SpanOf(tensor, instr.elem_bytes, zeros, shape).value_or(Span{});
}

// The region a plain store writes, element offsets from the buffer start and extents, when the
// instruction says it: the tile's shape at `offsets`, or its [rows, cols] valid corner (the decoder
// narrows 1-D and 2-D tiles only, so the leading extents stay the shape's). None for a scatter,
// whose elements go where its indices say.
struct Region {
  int rank = 0;
  std::array<int64_t, kMaxDims> extent{};
};

std::optional<Region> StoredRegion(const Instr& instr, const int64_t* regs) {
  if (instr.scatter || instr.paged.on || instr.mgather.on) return std::nullopt;
  Region region{instr.rank, instr.shape};
  if (instr.partial) {
    auto read = [&](const Operand& operand) { return operand.is_reg() ? regs[operand.reg] : operand.imm; };
    const int last = instr.rank - 1;
    if (last >= 1) region.extent[last - 1] = read(instr.valid.rows);
    region.extent[last] = read(instr.valid.cols);
    if (last == 0 && read(instr.valid.rows) == 0) region.extent[last] = 0;  // a 1-D tile is one row
  }
  return region;
}

// The bytes of the peer's window a store of `region` at `offsets` wrote, one piece per maximal run
// (a dense region is one piece: one MPI_Put). `staged` holds the store's bytes, its first byte
// being byte `span_begin` of the buffer; `window_offset` is where the buffer starts in the window.
// Only called after the store ran, so the region lies inside the view.
std::vector<rt::CommPiece> RegionRuns(const Region& region, const rt::ChipTensor& tensor, size_t elem,
                                      const int64_t* offsets, const std::byte* staged, uint64_t span_begin,
                                      uint64_t window_offset) {
  std::vector<rt::CommPiece> pieces;
  for (int d = 0; d < region.rank; ++d)
    if (region.extent[d] <= 0) return pieces;
  const int last = region.rank - 1;
  // A row: the innermost extent, one run where its elements are adjacent, else one run each.
  const bool dense_rows = tensor.strides[last] == 1 || region.extent[last] == 1;
  const uint64_t run_bytes = dense_rows ? static_cast<uint64_t>(region.extent[last]) * elem : elem;
  const int64_t runs_per_row = dense_rows ? 1 : region.extent[last];
  auto add = [&](uint64_t byte) {  // byte: from the buffer start
    if (!pieces.empty()) {
      rt::CommPiece& back = pieces.back();
      if (back.offset + back.bytes == window_offset + byte) {  // continues the previous run
        back.bytes += run_bytes;
        return;
      }
    }
    pieces.push_back({window_offset + byte, staged + (byte - span_begin), run_bytes});
  };
  std::array<int64_t, kMaxDims> index{};
  for (;;) {
    uint64_t element = tensor.start_offset;
    for (int d = 0; d < last; ++d) element += static_cast<uint64_t>(offsets[d] + index[d]) * tensor.strides[d];
    for (int64_t i = 0; i < runs_per_row; ++i)
      add((element + static_cast<uint64_t>(offsets[last] + i) * tensor.strides[last]) * elem);
    int d = last - 1;
    while (d >= 0 && ++index[d] == region.extent[d]) index[d--] = 0;
    if (d < 0) break;
  }
  // Strides need not be increasing (a transposed view): runs may come out of order or overlap
  // (a zero stride). Sorted and merged, each byte goes once; they all hold the store's final bytes.
  if (!std::is_sorted(pieces.begin(), pieces.end(), [](auto& a, auto& b) { return a.offset < b.offset; })) {
    std::sort(pieces.begin(), pieces.end(), [](auto& a, auto& b) { return a.offset < b.offset; });
    std::vector<rt::CommPiece> merged;
    for (const rt::CommPiece& piece : pieces) {
      if (!merged.empty() && piece.offset <= merged.back().offset + merged.back().bytes) {
        rt::CommPiece& back = merged.back();
        back.bytes = std::max(back.bytes, static_cast<size_t>(piece.offset + piece.bytes - back.offset));
      } else {
        merged.push_back(piece);
      }
    }
    pieces = std::move(merged);
  }
  return pieces;
}

// Maximal runs of the staged bytes a store wrote, as pieces of the peer's window: a byte is
// written when the two stagings, filled 0x00 and 0xFF before the store, agree on it.
std::vector<rt::CommPiece> WrittenRuns(const std::vector<std::byte>& zeros, const std::vector<std::byte>& ones,
                                       uint64_t window_offset) {
  std::vector<rt::CommPiece> pieces;
  const size_t n = zeros.size();
  for (size_t i = 0; i < n;) {
    if (zeros[i] != ones[i]) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < n && zeros[j] == ones[j]) ++j;
    pieces.push_back({window_offset + i, zeros.data() + i, j - i});
    i = j;
  }
  return pieces;
}

// Maximal runs of non-zero elements of an atomic store's staging (filled with zeros, so it holds
// the added values): adding a zero changes nothing, so only these need to reach the peer.
std::vector<rt::CommPiece> AddedRuns(const std::vector<std::byte>& staged, size_t elem, uint64_t window_offset) {
  std::vector<rt::CommPiece> pieces;
  auto nonzero = [&](size_t i) {
    for (size_t b = 0; b < elem; ++b)
      if (staged[i + b] != std::byte{0}) return true;
    return false;
  };
  const size_t n = staged.size() / elem * elem;
  for (size_t i = 0; i < n;) {
    if (!nonzero(i)) {
      i += elem;
      continue;
    }
    size_t j = i;
    while (j < n && nonzero(j)) j += elem;
    pieces.push_back({window_offset + i, staged.data() + i, j - i});
    i = j;
  }
  return pieces;
}

}  // namespace

Result RunRemoteTransfer(const DecodedKernel& kernel, size_t index, const int64_t* args, const int64_t* regs,
                         const int64_t* offsets, const std::function<Result(const int64_t*)>& transfer) {
  const Instr& instr = kernel.code[index];
  auto window = WindowOf(kernel, index, args);
  if (!window) return pypto::unexpected(window.error());
  auto peer = PeerOf(kernel, index, *window, regs);
  if (!peer) return pypto::unexpected(peer.error());
  std::array<int64_t, rt::kArgSlots> moved_args;
  std::copy_n(args, rt::kArgSlots, moved_args.begin());
  rt::ChipTensor moved = *window->tensor;
  moved_args[instr.tensor_slot] = reinterpret_cast<int64_t>(&moved);
  rt::CommTransport* transport = window->place.transport();
  if (!transport) {  // the peer's window is memory of this process: the transfer runs on it directly
    moved.buffer_addr = window->place.PeerAddress(*peer);
    return transfer(moved_args.data());
  }
  // The peer is another process: the transfer runs on a local staging of the bytes it touches,
  // placed so that the descriptor's offsets land in it, fetched before a load, sent after a store.
  const Span span = TouchedSpan(instr, *window->tensor, offsets);
  const uint64_t window_offset = window->place.offset + span.begin;
  if (window_offset + (span.end - span.begin) > window->place.domain->window_bytes)
    return KernelFailure(kernel, index,
                         fmt::format("{} reaches bytes [{}, {}) of the peer's window, which holds {}",
                                     WindowName(kernel, instr.tensor_slot), window_offset,
                                     window_offset + (span.end - span.begin), window->place.domain->window_bytes));
  // A small staging is this thread's, reused (one per call would cost an allocation and a zeroing
  // each); a large one (a gather's whole view) is the call's, so no thread keeps it. Only the paths
  // that read bytes the transfer may not write fill it first.
  constexpr size_t kReusedStaging = size_t{1} << 20;
  thread_local std::vector<std::byte> reused;
  std::vector<std::byte> own;
  std::vector<std::byte>& staged = span.end - span.begin <= kReusedStaging ? reused : own;
  staged.resize(span.end - span.begin);
  auto stage_at = [&](std::vector<std::byte>& buffer) {
    moved.buffer_addr = reinterpret_cast<uintptr_t>(buffer.data()) - span.begin;
  };
  stage_at(staged);
  if (instr.op == Opcode::Load) {
    if (!staged.empty()) transport->Get(*peer, window_offset, staged.data(), staged.size());
    return transfer(moved_args.data());
  }
  if (instr.atomic_add) {
    std::fill(staged.begin(), staged.end(), std::byte{0});
    if (Result ran = transfer(moved_args.data()); !ran) return ran;
    const auto pieces = AddedRuns(staged, instr.elem_bytes, window_offset);
    if (pieces.empty()) return {};
    if (std::string refused = transport->Accumulate(*peer, pieces, instr.elem_dtype); !refused.empty())
      return KernelFailure(kernel, index, refused);
    return {};
  }
  // A plain store of a region the instruction says: one run of the store, then its region put.
  if (const auto region = StoredRegion(instr, regs)) {
    if (Result ran = transfer(moved_args.data()); !ran) return ran;
    const auto pieces = RegionRuns(*region, *window->tensor, instr.elem_bytes, offsets, staged.data(), span.begin,
                                   window->place.offset);
    if (!pieces.empty()) transport->Put(*peer, pieces);
    return {};
  }
  // A scatter writes where its indices say: found by running it twice, into stagings filled with
  // 0x00 and 0xFF, and putting the bytes the two agree on.
  std::fill(staged.begin(), staged.end(), std::byte{0});
  if (Result ran = transfer(moved_args.data()); !ran) return ran;
  std::vector<std::byte> ones(staged.size(), std::byte{0xFF});
  stage_at(ones);
  if (Result ran = transfer(moved_args.data()); !ran) return ran;
  const auto pieces = WrittenRuns(staged, ones, window_offset);
  if (!pieces.empty()) transport->Put(*peer, pieces);
  return {};
}

}  // namespace pypto::sim
