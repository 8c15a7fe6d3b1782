// The on-chip buffers of the simulated cores. Each logical core owns one arena per memory space
// (UB for vector cores; L1/L0A/L0B/L0C/bias for cube cores), sized from the SoC table and allocated
// on first use. Contents persist across tasks on the same core, as on hardware. Between runs, Scrub
// zeroes what a run touched, so every run starts from zeroed buffers (as a fresh pool would) while
// the arenas themselves are allocated once.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "pypto/ir/soc.h"
#include "pypto/runtime/runtime.h"

namespace pypto::sim {

class CoreMemory {
 public:
  explicit CoreMemory(const ir::SocSpec& soc);

  // The bytes [offset, offset + bytes) of `space`, or null when the range leaves the buffer.
  // Only the thread currently running this core may call it. Throws std::bad_alloc when the arena
  // cannot be allocated.
  std::byte* Access(ir::MemorySpace space, int64_t offset, int64_t bytes);
  int64_t capacity(ir::MemorySpace space) const { return capacity_[Index(space)]; }

  // The whole physical buffer of `space` for a hand-written kernel, which may also use the top of UB
  // that generated kernels leave alone (SocSpec::ub_reserved_bytes); `bytes` receives its size. Same
  // thread and exception rules as Access.
  std::byte* Whole(ir::MemorySpace space, int64_t& bytes);

  // Zeroes the bytes handed out by Access since the last Scrub. Only while no task runs on the core.
  void Scrub();

  // Folds every allocated arena into `hash` (progress_mark.h). Any thread may call it, also while a
  // kernel runs on the core and writes what it reads.
  uint64_t Digest(uint64_t hash) const;

 private:
  static constexpr size_t kSpaces = 10;
  static size_t Index(ir::MemorySpace space) { return static_cast<size_t>(space) % kSpaces; }

  struct FreeBytes {
    void operator()(std::byte* bytes) const;
  };
  std::byte* Arena(size_t index);

  std::array<int64_t, kSpaces> capacity_{};
  std::array<int64_t, kSpaces> physical_{};  // capacity_ plus what generated kernels leave alone
  std::array<int64_t, kSpaces> touched_{};  // per space: the end of the highest range handed out
  std::array<std::unique_ptr<std::byte, FreeBytes>, kSpaces> arenas_;
  // arenas_ as other threads may read them (Digest): set once an arena exists.
  std::array<std::atomic<std::byte*>, kSpaces> published_{};
};

// All cores of one run, numbered within their core type like KernelLaunch::core_index.
class CoreMemoryPool {
 public:
  CoreMemoryPool(const ir::SocSpec& soc, int aic_cores, int aiv_cores);

  // Null when the core does not exist.
  CoreMemory* For(rt::CoreType type, int index);

  // CoreMemory::Scrub on every core; only while no task runs.
  void Scrub();

 private:
  std::deque<CoreMemory> aic_;  // a deque: a CoreMemory (its atomics) cannot move
  std::deque<CoreMemory> aiv_;
};

}  // namespace pypto::sim
