#include "core_memory.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "progress_mark.h"

namespace pypto::sim {

namespace {
constexpr size_t kArenaAlignment = 64;
}

void CoreMemory::FreeBytes::operator()(std::byte* bytes) const { std::free(bytes); }

CoreMemory::CoreMemory(const ir::SocSpec& soc) {
  for (auto space : {ir::MemorySpace::Vec, ir::MemorySpace::Mat, ir::MemorySpace::Left, ir::MemorySpace::Right,
                     ir::MemorySpace::Acc, ir::MemorySpace::Bias, ir::MemorySpace::LeftScale,
                     ir::MemorySpace::RightScale}) {
    capacity_[Index(space)] = soc.capacity(space);
    physical_[Index(space)] = capacity_[Index(space)] + (space == ir::MemorySpace::Vec ? soc.ub_reserved_bytes : 0);
  }
}

std::byte* CoreMemory::Arena(size_t index) {
  auto& arena = arenas_[index];
  if (!arena) {
    // Zeroed, so a tile read before it is written gives the same answer on every run.
    const size_t size =
        (static_cast<size_t>(physical_[index]) + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
    auto* raw = static_cast<std::byte*>(std::aligned_alloc(kArenaAlignment, size));
    if (!raw) throw std::bad_alloc();
    std::memset(raw, 0, size);
    arena.reset(raw);
    published_[index].store(raw, std::memory_order_release);
  }
  return arena.get();
}

uint64_t CoreMemory::Digest(uint64_t hash) const {
  for (size_t index = 0; index < kSpaces; ++index) {
    const std::byte* arena = published_[index].load(std::memory_order_acquire);
    if (arena) hash = DigestBytes(hash, arena, static_cast<uint64_t>(physical_[index]));
  }
  return hash;
}

std::byte* CoreMemory::Whole(ir::MemorySpace space, int64_t& bytes) {
  const size_t index = Index(space);
  bytes = physical_[index];
  if (bytes == 0) return nullptr;
  touched_[index] = bytes;
  return Arena(index);
}

std::byte* CoreMemory::Access(ir::MemorySpace space, int64_t offset, int64_t bytes) {
  const size_t index = Index(space);
  const int64_t capacity = capacity_[index];
  if (offset < 0 || bytes < 0 || offset > capacity || bytes > capacity - offset || capacity == 0) return nullptr;
  std::byte* arena = Arena(index);
  touched_[index] = std::max(touched_[index], offset + bytes);
  return arena + offset;
}

void CoreMemory::Scrub() {
  for (size_t index = 0; index < kSpaces; ++index) {
    if (touched_[index] == 0) continue;
    // Whole cache lines (the arena is a whole number of them), in case a vector op wrote past its end.
    const size_t touched = static_cast<size_t>(touched_[index]);
    const size_t bytes = (touched + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
    if (arenas_[index]) std::memset(arenas_[index].get(), 0, bytes);
    touched_[index] = 0;
  }
}

CoreMemoryPool::CoreMemoryPool(const ir::SocSpec& soc, int aic_cores, int aiv_cores) {
  for (int i = 0; i < aic_cores; ++i) aic_.emplace_back(soc);
  for (int i = 0; i < aiv_cores; ++i) aiv_.emplace_back(soc);
}

void CoreMemoryPool::Scrub() {
  for (auto& core : aic_) core.Scrub();
  for (auto& core : aiv_) core.Scrub();
}

CoreMemory* CoreMemoryPool::For(rt::CoreType type, int index) {
  auto& cores = type == rt::CoreType::AIC ? aic_ : aiv_;
  if (index < 0 || static_cast<size_t>(index) >= cores.size()) return nullptr;
  return &cores[static_cast<size_t>(index)];
}

}  // namespace pypto::sim
