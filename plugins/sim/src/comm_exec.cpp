#include "comm_exec.h"
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <span>
#include <string>
#include <thread>

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
  auto target = CellAt(window.place.PeerAddress(*peer) + *cell);
  const auto value = static_cast<int32_t>(Read(instr.comm.value, regs));
  if (instr.comm.atomic_add) target.fetch_add(value);
  else target.store(value);
  return {};
}

Result Wait(const DecodedKernel& kernel, size_t index, const Window& window, const int64_t* offsets,
            const int64_t* regs) {
  const Instr& instr = kernel.code[index];
  auto cell = CellOffset(kernel, index, *window.tensor, offsets);
  if (!cell) return pypto::unexpected(cell.error());
  auto local = CellAt(static_cast<uintptr_t>(window.tensor->buffer_addr) + *cell);
  const int64_t expected = Read(instr.comm.value, regs);
  const auto limit = WaitLimit();
  if (BlockUntil([&] { return Compare(instr.comm.cmp, local.load(), expected); }, limit)) return {};
  return KernelFailure(kernel, index,
                       fmt::format("rank {} waited {} s for signal {}[{}] {} {}, but it holds {}: no peer notified it "
                                   "(PYPTO_SIM_COMM_TIMEOUT_S sets the limit)",
                                   window.place.rank, limit.count() / 1000.0, WindowName(kernel, instr.tensor_slot),
                                   fmt::join(std::span(offsets, instr.rank), ", "), CmpText(instr.comm.cmp), expected,
                                   local.load()));
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
  const uint64_t mine = cell_offset(me);
  for (int32_t peer = 0; peer < nranks; ++peer)
    if (peer != me) CellAt(window.place.PeerAddress(peer) + mine).fetch_add(1);
  const auto base = static_cast<uintptr_t>(tensor.buffer_addr);
  const auto limit = WaitLimit();
  for (int32_t peer = 0; peer < nranks; ++peer) {
    if (peer == me) continue;
    auto credit = CellAt(base + cell_offset(peer));
    if (!BlockUntil([&] { return credit.load() >= 1; }, limit))
      return KernelFailure(kernel, index,
                           fmt::format("rank {} waited {} s at the barrier on {} for rank {}, which never arrived "
                                       "(PYPTO_SIM_COMM_TIMEOUT_S sets the limit)",
                                       me, limit.count() / 1000.0, WindowName(kernel, instr.tensor_slot), peer));
    credit.fetch_sub(1);
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

pypto::expected<rt::ChipTensor, rt::FatalError> PeerTensor(const DecodedKernel& kernel, size_t index,
                                                           const int64_t* args, const int64_t* regs) {
  auto window = WindowOf(kernel, index, args);
  if (!window) return pypto::unexpected(window.error());
  auto peer = PeerOf(kernel, index, *window, regs);
  if (!peer) return pypto::unexpected(peer.error());
  rt::ChipTensor moved = *window->tensor;
  moved.buffer_addr = window->place.PeerAddress(*peer);
  return moved;
}

}  // namespace pypto::sim
