// The tensors a hand-written kernel is handed, each between guard pages, so that a stray write past
// one faults at the instruction that makes it instead of corrupting the memory that follows (a torch
// allocation's neighbour, the heap's bookkeeping: `double free or corruption` long after the kernel
// returned). A generated kernel needs none: the simulator checks each of its accesses.
//
// Each tensor's buffer is copied into a mapping of its own, its last byte at the end of a page whose
// successor can be read but not written, and the kernel gets descriptors of the copies. A write just
// past the end, or into the page before the start, raises SIGSEGV, which the crash guard
// (extern_guard.cpp) turns into KernelFailed; DescribeWrite names the tensor and the offset. What the
// kernel changed is copied back, byte by byte, when it returns. Reads past the end read zeros: only
// writes corrupt, and library code may read a few bytes beyond a tensor's end as a device would.
//
// The copy keeps the buffer's address alignment (up to 64 bytes), so the last byte sits at the page
// end only when the size is a multiple of it; the few bytes between, and those between the page
// start and the first byte, hold a fill pattern that is checked when the kernel returns
// (StrayWrite): such a write is reported then, with its offset, instead of at once.
//
// Kernels running side by side share the copy of a buffer (the blocks of a launch read what others
// wrote, and spin on flags in global memory), and each kernel copies back what changed when it
// returns, since a task that waits on it may start at once. A buffer above kMaxGuardedBytes, or one
// overlapping another buffer of the kernel or of a running kernel without being the same buffer, is
// handed over in place, unguarded.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pypto/runtime/chip_tensor.h"
#include "pypto/runtime/runtime.h"
#include "sim_kernel.h"

namespace pypto::sim {

struct GuardedBuffer;  // a buffer's guarded copy, shared by the kernels running with it

class GuardedTensors {
 public:
  // Each kernel joining or leaving a copy compares the whole buffer with what it last agreed on: a
  // large workspace that every launch of a model is handed (64 MB in pypto-lib's paged attention)
  // would cost milliseconds a launch.
  static constexpr uint64_t kMaxGuardedBytes = uint64_t{16} << 20;

  // Copies the tensors of `args` (kernel.tensor_count descriptor pointers first) into guarded copies.
  GuardedTensors(const DecodedKernel& kernel, const int64_t* args);
  // Copies back what the kernel changed, and frees a copy no running kernel still uses.
  ~GuardedTensors();
  GuardedTensors(const GuardedTensors&) = delete;
  GuardedTensors& operator=(const GuardedTensors&) = delete;

  // The args[] to hand the kernel: the guarded descriptors in the tensor slots, the rest as given.
  int64_t* args() { return args_.data(); }

  // A fault at `address` in a guard page of one of this kernel's tensors: "wrote past the end of
  // tensor 'out' (args[1], ...): ...".
  std::optional<std::string> DescribeWrite(uintptr_t address) const;
  // After the kernel returned: a write into the fill bytes before a tensor's first byte or after its
  // last, described as DescribeWrite does.
  std::optional<std::string> StrayWrite() const;

 private:
  struct Slot {
    uint32_t slot;
    GuardedBuffer* buffer;
  };
  std::string Describe(const Slot& slot, int64_t offset, bool found_on_return) const;

  const DecodedKernel& kernel_;
  std::array<int64_t, rt::kArgSlots> args_{};
  std::vector<rt::ChipTensor> descriptors_;  // by tensor slot
  std::vector<Slot> guarded_;                // the slots handed a guarded copy
  std::vector<GuardedBuffer*> held_;         // each buffer once
};

}  // namespace pypto::sim
