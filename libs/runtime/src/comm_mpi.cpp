// The MPI backend (comm_mpi.h): MPI set-up, the host's collectives, and the transport through which
// a rank's comm ops reach its peers' windows.
#include "pypto/runtime/comm_mpi.h"

#include <dlfcn.h>
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <climits>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "pypto/runtime/comm_domain.h"

namespace pypto::rt::mpi {
namespace {

// MPI counts are ints: larger transfers go in pieces of this many bytes.
constexpr size_t kMaxPiece = size_t{1} << 30;

// One lock serializes every MPI call of the process: the simulator's cores run comm ops from
// several threads, and MPI_THREAD_SERIALIZED (which every MPI provides) is then enough.
std::mutex& CallLock() {
  static std::mutex lock;
  return lock;
}

// The passive-target epoch of one window: every operation is completed at its target (flushed)
// before it returns, so a notify after a put is seen after the put's data, as on the device.
class MpiTransport final : public CommTransport {
 public:
  MpiTransport(MPI_Win win, std::byte* base) : win_(win), base_(base) {}

  void StoreCell(int32_t rank, uint64_t offset, int32_t value) override { UpdateCell(rank, offset, value, MPI_REPLACE); }
  void AddCell(int32_t rank, uint64_t offset, int32_t value) override { UpdateCell(rank, offset, value, MPI_SUM); }

  int32_t LoadOwnCell(uint64_t offset) override {
    std::lock_guard guard(CallLock());
    MPI_Win_sync(win_);  // the window's public copy (peers' updates) made visible to this process's loads
    return std::atomic_ref<int32_t>(*reinterpret_cast<int32_t*>(base_ + offset)).load();
  }

  void Get(int32_t rank, uint64_t offset, void* dst, size_t bytes) override {
    std::lock_guard guard(CallLock());
    for (size_t done = 0; done < bytes; done += kMaxPiece) {
      const int piece = static_cast<int>(std::min(kMaxPiece, bytes - done));
      MPI_Get(static_cast<std::byte*>(dst) + done, piece, MPI_BYTE, rank, static_cast<MPI_Aint>(offset + done), piece,
              MPI_BYTE, win_);
    }
    MPI_Win_flush(rank, win_);
  }

  void Put(int32_t rank, std::span<const CommPiece> pieces) override {
    std::lock_guard guard(CallLock());
    for (const CommPiece& piece : pieces)
      for (size_t done = 0; done < piece.bytes; done += kMaxPiece) {
        const int count = static_cast<int>(std::min(kMaxPiece, piece.bytes - done));
        MPI_Put(piece.data + done, count, MPI_BYTE, rank, static_cast<MPI_Aint>(piece.offset + done), count, MPI_BYTE,
                win_);
      }
    MPI_Win_flush(rank, win_);
  }

  std::string Accumulate(int32_t rank, std::span<const CommPiece> pieces, ir::DataType dtype) override {
    if (dtype == ir::DataType::FP16 || dtype == ir::DataType::BF16) {
      for (const CommPiece& piece : pieces) AddHalves(rank, piece, dtype);
      return {};
    }
    MPI_Datatype type = ElementType(dtype);
    if (type == MPI_DATATYPE_NULL)
      return fmt::format("MPI cannot add {} elements atomically (MPI_Accumulate has no such type): an atomic add "
                         "into a window of another MPI rank takes floating-point or integer elements",
                         ir::DataTypeName(dtype));
    int size = 0;
    MPI_Type_size(type, &size);
    const size_t elem = static_cast<size_t>(size);
    const size_t per_call = kMaxPiece / elem;
    std::lock_guard guard(CallLock());
    for (const CommPiece& piece : pieces) {
      const size_t count = piece.bytes / elem;
      for (size_t done = 0; done < count; done += per_call) {
        const int n = static_cast<int>(std::min(per_call, count - done));
        MPI_Accumulate(piece.data + done * elem, n, type, rank, static_cast<MPI_Aint>(piece.offset + done * elem), n,
                       type, MPI_SUM, win_);
      }
    }
    MPI_Win_flush(rank, win_);
    return {};
  }

  // A peer's RMA may need this process to enter MPI (transports without hardware one-sided access).
  void Progress() override {
    std::lock_guard guard(CallLock());
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  }

 private:
  // Every cell update is an MPI accumulate of one INT32 (MPI_REPLACE or MPI_SUM): MPI makes
  // accumulates of one type atomic with each other, whichever rank issues them.
  void UpdateCell(int32_t rank, uint64_t offset, int32_t value, MPI_Op op) {
    std::lock_guard guard(CallLock());
    MPI_Accumulate(&value, 1, MPI_INT32_T, rank, static_cast<MPI_Aint>(offset), 1, MPI_INT32_T, op, win_);
    MPI_Win_flush(rank, win_);
  }

  // FP16 and BF16 have no MPI type to accumulate: their add is a compare-and-swap loop over the
  // aligned 32-bit words that hold the piece's elements. Each word's new value is computed from the
  // value the target held (each sum formed in FP32 and rounded to nearest even once, as the
  // simulator's own atomic add does) and swapped in only if the word still holds it; the words a
  // concurrent add changed meanwhile are recomputed from what the swap found. Reads and swaps are
  // both accumulate-family operations on MPI_UINT32_T, so MPI keeps them atomic with each other.
  void AddHalves(int32_t rank, const CommPiece& piece, ir::DataType dtype) {
    const uint64_t first = piece.offset & ~uint64_t{3};
    const uint64_t end = (piece.offset + piece.bytes + 3) & ~uint64_t{3};
    const size_t words = static_cast<size_t>((end - first) / 4);
    std::vector<uint32_t> seen(words), wanted(words), found(words);
    std::lock_guard guard(CallLock());
    for (size_t done = 0; done < words; done += kMaxPiece / 4) {
      const int n = static_cast<int>(std::min(kMaxPiece / 4, words - done));
      MPI_Get_accumulate(nullptr, 0, MPI_UINT32_T, seen.data() + done, n, MPI_UINT32_T, rank,
                         static_cast<MPI_Aint>(first + done * 4), n, MPI_UINT32_T, MPI_NO_OP, win_);
    }
    MPI_Win_flush(rank, win_);
    std::vector<size_t> pending(words);
    for (size_t w = 0; w < words; ++w) pending[w] = w;
    while (!pending.empty()) {
      for (size_t w : pending) {
        wanted[w] = AddIntoWord(seen[w], first + w * 4, piece, dtype);
        MPI_Compare_and_swap(&wanted[w], &seen[w], &found[w], MPI_UINT32_T, rank, static_cast<MPI_Aint>(first + w * 4),
                             win_);
      }
      MPI_Win_flush(rank, win_);
      std::erase_if(pending, [&](size_t w) {
        if (found[w] == seen[w]) return true;
        seen[w] = found[w];
        return false;
      });
    }
  }

  // `word` (the 4 bytes at window offset `at`) with the piece's elements that lie in it added.
  static uint32_t AddIntoWord(uint32_t word, uint64_t at, const CommPiece& piece, ir::DataType dtype) {
    for (uint64_t half = at; half < at + 4; half += 2) {
      if (half < piece.offset || half + 2 > piece.offset + piece.bytes) continue;
      const unsigned shift = static_cast<unsigned>(half - at) * 8;
      uint16_t part = 0;
      std::memcpy(&part, piece.data + (half - piece.offset), 2);
      const auto old = static_cast<uint16_t>(word >> shift);
      const uint16_t sum = HalfFromFloat(FloatFromHalf(old, dtype) + FloatFromHalf(part, dtype), dtype);
      word = (word & ~(uint32_t{0xFFFF} << shift)) | (uint32_t{sum} << shift);
    }
    return word;
  }

  static float FloatFromHalf(uint16_t bits, ir::DataType dtype) {
    if (dtype == ir::DataType::FP16) return static_cast<float>(std::bit_cast<_Float16>(bits));
    return std::bit_cast<float>(uint32_t{bits} << 16);
  }

  // Rounded to nearest even (a NaN stays a quiet NaN).
  static uint16_t HalfFromFloat(float value, ir::DataType dtype) {
    if (dtype == ir::DataType::FP16) return std::bit_cast<uint16_t>(static_cast<_Float16>(value));
    const uint32_t bits = std::bit_cast<uint32_t>(value);
    if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);
    return static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
  }

  static MPI_Datatype ElementType(ir::DataType dtype) {
    switch (dtype) {
      case ir::DataType::FP32: return MPI_FLOAT;
      case ir::DataType::FP64: return MPI_DOUBLE;
      case ir::DataType::INT8: return MPI_INT8_T;
      case ir::DataType::INT16: return MPI_INT16_T;
      case ir::DataType::INT32: return MPI_INT32_T;
      case ir::DataType::INT64: return MPI_INT64_T;
      case ir::DataType::UINT8: return MPI_UINT8_T;
      case ir::DataType::UINT16: return MPI_UINT16_T;
      case ir::DataType::UINT32: return MPI_UINT32_T;
      case ir::DataType::UINT64: return MPI_UINT64_T;
      default: return MPI_DATATYPE_NULL;
    }
  }

  MPI_Win win_;
  std::byte* base_;
};

struct Window {
  MPI_Win win = MPI_WIN_NULL;
  int64_t domain = 0;  // 0: this process has no rank in the domain
};

std::map<int64_t, Window>& Windows() {
  static std::map<int64_t, Window> windows;
  return windows;
}

// Python loads the extension that links libmpi with RTLD_LOCAL; Open MPI's components, which it
// dlopens itself, expect libmpi's symbols to be global. Reopening libmpi RTLD_GLOBAL provides them.
void PromoteLibmpiToGlobal() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&MPI_Init_thread), &info) && info.dli_fname)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
}

}  // namespace

bool Available() { return true; }

std::string NoMpiMessage() { return {}; }

pypto::expected<void, std::string> Init() {
  int ready = 0;
  MPI_Initialized(&ready);
  if (ready) return {};
  PromoteLibmpiToGlobal();
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
    return pypto::unexpected(std::string("MPI_Init_thread failed"));
  if (provided < MPI_THREAD_SERIALIZED)
    return pypto::unexpected(fmt::format("this MPI provides thread level {} but the simulator's cores call it from "
                                         "several threads (MPI_THREAD_SERIALIZED is needed)",
                                         provided));
  return {};
}

bool Initialized() {
  int ready = 0, done = 0;
  MPI_Initialized(&ready);
  MPI_Finalized(&done);
  return ready && !done;
}

void Finalize() {
  if (Initialized()) MPI_Finalize();
}

int Rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int Size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

void Barrier() { MPI_Barrier(MPI_COMM_WORLD); }

void Broadcast(void* data, size_t bytes, int root, Waiting waiting) {
  constexpr auto kLongestPause = std::chrono::microseconds(2000);
  for (size_t done = 0; done < bytes; done += kMaxPiece) {
    const int piece = static_cast<int>(std::min(kMaxPiece, bytes - done));
    std::byte* at = static_cast<std::byte*>(data) + done;
    if (waiting == Waiting::Busy) {
      MPI_Bcast(at, piece, MPI_BYTE, root, MPI_COMM_WORLD);
      continue;
    }
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Ibcast(at, piece, MPI_BYTE, root, MPI_COMM_WORLD, &request);
    auto pause = std::chrono::microseconds(50);
    for (int finished = 0;;) {
      MPI_Test(&request, &finished, MPI_STATUS_IGNORE);  // also drives the broadcast's progress
      if (finished) break;
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, kLongestPause);
    }
  }
}

std::vector<std::string> AllGather(const std::string& text) {
  const int size = Size();
  const int length = static_cast<int>(text.size());
  std::vector<int> lengths(static_cast<size_t>(size));
  MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> displs(static_cast<size_t>(size));
  int total = 0;
  for (int r = 0; r < size; ++r) {
    displs[static_cast<size_t>(r)] = total;
    total += lengths[static_cast<size_t>(r)];
  }
  std::string all(static_cast<size_t>(total), '\0');
  MPI_Allgatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), displs.data(), MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> texts;
  for (int r = 0; r < size; ++r)
    texts.push_back(all.substr(static_cast<size_t>(displs[static_cast<size_t>(r)]),
                               static_cast<size_t>(lengths[static_cast<size_t>(r)])));
  return texts;
}

pypto::expected<OpenWindow, std::string> OpenWindows(uint64_t bytes, int32_t nranks) {
  const int me = Rank();
  if (Size() < nranks)
    return pypto::unexpected(fmt::format("the program spans {} ranks but the MPI job has {} processes: start it "
                                         "with `mpirun -n {}` (or more)",
                                         nranks, Size(), nranks));
  const uint64_t mine = me < nranks ? bytes : 0;
  void* base = nullptr;
  MPI_Win win = MPI_WIN_NULL;
  if (MPI_Win_allocate(static_cast<MPI_Aint>(mine), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win) != MPI_SUCCESS)
    return pypto::unexpected(fmt::format("MPI_Win_allocate of a {}-byte window failed", mine));
  if (mine) std::memset(base, 0, mine);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  MPI_Barrier(MPI_COMM_WORLD);  // every window zeroed before any peer writes into it
  Window window{win, 0};
  if (me < nranks) {
    CommDomain domain;
    domain.windows.assign(static_cast<size_t>(nranks), 0);
    domain.windows[static_cast<size_t>(me)] = reinterpret_cast<uintptr_t>(base);
    domain.window_bytes = bytes;
    domain.transport = std::make_shared<MpiTransport>(win, static_cast<std::byte*>(base));
    window.domain = RegisterCommDomain(std::move(domain));
  }
  static int64_t next = 1;
  const int64_t handle = next++;
  Windows().emplace(handle, window);
  return OpenWindow{me < nranks ? reinterpret_cast<uintptr_t>(base) : 0, handle};
}

void CloseWindows(int64_t handle) {
  auto found = Windows().find(handle);
  if (found == Windows().end()) return;
  Window window = found->second;
  Windows().erase(found);
  if (window.domain) UnregisterCommDomain(window.domain);
  MPI_Win_unlock_all(window.win);
  MPI_Win_free(&window.win);  // collective: no peer still reaches this window
}

}  // namespace pypto::rt::mpi
