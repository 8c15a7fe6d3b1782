// Heap rings: the memory a run's tensors are carved from, one ring per scope depth as upstream's
// HeapRing. A block is charged to its ring from HeapAllocate until the orchestration has released it
// and every task it named as a user has retired. Upstream reclaims a ring in task order (its tail
// follows the oldest live task); here each block comes back as soon as its own users are done, which
// frees no later than upstream would and never earlier than is safe. A ring that is full waits for
// blocks to come back, and fails with HeapRingDeadlock when only the orchestration could free room:
// every block still charged is one it has not released, so waiting would wait for itself.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include "runtime_impl.h"

namespace pypto::rt {

namespace {

constexpr uint64_t kHeapSlice = 1024;  // upstream carves 1 KiB-aligned slices
constexpr size_t kHeapAlignment = 64;  // kernels may use aligned vector loads

uint64_t SliceBytes(uint64_t bytes) { return std::max(kHeapSlice, (bytes + kHeapSlice - 1) / kHeapSlice * kHeapSlice); }

}  // namespace

pypto::unexpected<FatalError> Runtime::Impl::HeapDeadlock(uint64_t bytes, size_t ring, std::string_view name,
                                                           bool too_big) {
  const uint64_t capacity = options_.ring_heap[ring];
  std::string why =
      too_big ? fmt::format("which is more than the whole ring ({} bytes)", capacity)
              : fmt::format("but {} of its {} bytes are held by tensors whose scopes are still open, which give them "
                            "back only when those scopes end",
                            heap_used_[ring], capacity);
  RecordError({FatalCode::HeapRingDeadlock,
               fmt::format("{} needs {} bytes of heap ring {} (scope depth {}), {}; raise the heap "
                           "(RunConfig(ring_heap=...), PTO2_RING_HEAP) or create fewer or smaller tensors in that "
                           "scope (e.g. inside a loop, whose body is a scope)",
                           name, bytes, ring, ring == kRings - 1 ? fmt::format("{} or deeper", ring)
                                                                 : fmt::format("{}", ring),
                           why)});
  return pypto::unexpected(*error_);
}

pypto::expected<HeapBlock, FatalError> Runtime::Impl::HeapAllocate(uint64_t bytes, size_t ring,
                                                                   std::string_view name) {
  std::unique_lock lock(mu_);
  ring = std::min(ring, kRings - 1);
  const uint64_t charged = SliceBytes(bytes);
  if (error_) return pypto::unexpected(*error_);
  if (charged > options_.ring_heap[ring]) return HeapDeadlock(bytes, ring, name, true);
  while (!error_ && heap_used_[ring] + charged > options_.ring_heap[ring]) {
    if (heap_leased_[ring] == 0) return HeapDeadlock(bytes, ring, name, false);
    ++heap_waiters_;
    WaitForProgress(lock);
    --heap_waiters_;
  }
  if (error_) return pypto::unexpected(*error_);
  void* memory = std::aligned_alloc(kHeapAlignment, charged);
  if (!memory)
    return pypto::unexpected(FatalError{FatalCode::OutOfMemory, fmt::format("cannot allocate {} bytes for {}",
                                                                            bytes, name)});
  std::memset(memory, 0, charged);
  heap_used_[ring] += charged;
  return HeapBlock{.memory = memory, .ring = ring, .bytes = charged};
}

void Runtime::Impl::HeapRelease(HeapBlock block, std::span<const TaskId> users) {
  if (!block.memory) return;
  std::lock_guard lock(mu_);
  auto lease = std::make_shared<HeapLease>(HeapLease{.block = block});
  for (TaskId user : users) {
    auto live = live_.find(user);
    if (live == live_.end()) continue;
    std::vector<std::shared_ptr<HeapLease>>& leases = live->second->leases;
    if (!leases.empty() && leases.back() == lease) continue;  // named twice
    leases.push_back(lease);
    ++lease->users_left;
  }
  if (lease->users_left == 0) return FreeHeapBlock(block);
  heap_leased_[block.ring] += block.bytes;
}

void Runtime::Impl::ReleaseLeases(Task& task) {
  for (const std::shared_ptr<HeapLease>& lease : task.leases) {
    if (--lease->users_left > 0) continue;
    heap_leased_[lease->block.ring] -= lease->block.bytes;
    FreeHeapBlock(lease->block);
  }
  task.leases.clear();
}

void Runtime::Impl::FreeHeapBlock(const HeapBlock& block) {
  std::free(block.memory);
  heap_used_[block.ring] -= block.bytes;
  if (heap_waiters_ > 0) idle_cv_.notify_all();
}

uint64_t Runtime::Impl::heap_used(size_t ring) const {
  std::lock_guard lock(mu_);
  return heap_used_[std::min(ring, kRings - 1)];
}

pypto::expected<HeapBlock, FatalError> Runtime::HeapAllocate(uint64_t bytes, size_t ring, std::string_view name) {
  return impl_->HeapAllocate(bytes, ring, name);
}
void Runtime::HeapRelease(HeapBlock block, std::span<const TaskId> users) { impl_->HeapRelease(block, users); }
uint64_t Runtime::heap_used(size_t ring) const { return impl_->heap_used(ring); }

}  // namespace pypto::rt
