// Pipe hazards (seed 002's "buffer read before the WaitFlag that orders its producer's pipe"). The
// simulator runs a core's pipes in program order, so a kernel that reads a UB buffer on one pipe before
// the flag ordering the pipe that wrote it computes the right numbers here and races on the device.
// This follows the ordering the device gives: each pipe's clock (what it is known to have seen of
// every pipe, a vector clock), which SetFlag snapshots from the source pipe and WaitFlag merges into
// the destination pipe, as TQue EnQue/DeQue and PipeBarrier<PIPE_ALL> do; and for every 32-byte block
// of UB the pipe and line that wrote it last. A read on another pipe that does not know that write is
// reported as a race, naming both lines. Tracked: DataCopy and DataCopyPad (GM -> UB: MTE2 writes,
// UB -> GM: MTE3 reads, UB -> UB: V) and the element-wise binary, tensor-scalar and unary families
// (V). Other instructions (Duplicate, Cast, reductions, ...) and scalar GetValue/SetValue are not.
#ifndef PYPTO_SIM_ASCENDC_PIPE_ORDER_H_
#define PYPTO_SIM_ASCENDC_PIPE_ORDER_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ascendc/core_context.h"

namespace AscendC::detail {

enum class Pipe : uint8_t { S, V, M, MTE1, MTE2, MTE3, FIX };
inline constexpr int kPipes = 7;

inline const char* PipeName(Pipe pipe) {
  static constexpr const char* kNames[kPipes] = {"S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX"};
  return kNames[static_cast<int>(pipe)];
}

// What a pipe is known to have seen: for every pipe, the last of its operations ordered before this
// pipe's next one (0: none).
using PipeClock = std::array<uint64_t, kPipes>;

inline void Merge(PipeClock& into, const PipeClock& from) {
  for (int p = 0; p < kPipes; ++p)
    if (from[p] > into[p]) into[p] = from[p];
}

struct BlockWrite {
  uint64_t time = 0;  // 0: not written in this task
  Pipe pipe = Pipe::S;
  SourceLine where{};
  const char* what = "";
};

struct PipeOrder {
  uint64_t task = 0;  // pypto_sim::t_task_serial of the task this state is of
  uint64_t now = 0;
  std::array<PipeClock, kPipes> clocks{};
  std::vector<BlockWrite> blocks;  // one per 32 bytes of UB
  static constexpr int kFlagSlots = kPipes * kPipes * 8;
  std::array<PipeClock, kFlagSlots> flags{};  // SetFlag's snapshot per (source, destination, id)
};

inline thread_local PipeOrder t_pipe_order;

// This thread's state, started afresh for each task.
inline PipeOrder& Order() {
  PipeOrder& order = t_pipe_order;
  if (order.task == pypto_sim::t_task_serial) return order;
  order.task = pypto_sim::t_task_serial;
  order.now = 0;
  order.clocks = {};
  order.flags = {};
  order.blocks.assign(order.blocks.size(), BlockWrite{});
  return order;
}

inline constexpr uint64_t kOrderBlock = 32;

// The UB blocks [first, last) that bytes [data, data + bytes) touch; empty outside this core's UB.
inline bool UbBlocks(const void* data, uint64_t bytes, uint64_t& first, uint64_t& last) {
  const PyptoSimCore* core = BoundCore();
  if (!core || !core->ub || bytes == 0) return false;
  const auto* p = static_cast<const unsigned char*>(data);
  if (p < core->ub || p >= core->ub + core->ub_bytes) return false;
  const uint64_t begin = static_cast<uint64_t>(p - core->ub);
  const uint64_t end = begin + bytes < static_cast<uint64_t>(core->ub_bytes) ? begin + bytes : core->ub_bytes;
  first = begin / kOrderBlock;
  last = (end + kOrderBlock - 1) / kOrderBlock;
  if (Order().blocks.size() < static_cast<size_t>(core->ub_bytes / kOrderBlock))
    Order().blocks.resize(static_cast<size_t>(core->ub_bytes / kOrderBlock));
  return true;
}

// `pipe` wrote UB bytes [data, data + bytes) (`what`, at `where`).
inline void PipeWrote(Pipe pipe, const char* what, const void* data, uint64_t bytes, SourceLine where) {
  uint64_t first, last;
  if (!UbBlocks(data, bytes, first, last)) return;
  PipeOrder& order = Order();
  const uint64_t time = ++order.now;
  order.clocks[static_cast<int>(pipe)][static_cast<int>(pipe)] = time;
  for (uint64_t b = first; b < last; ++b) order.blocks[b] = BlockWrite{time, pipe, where, what};
}

// `pipe` reads UB bytes [data, data + bytes) (`what`, at `where`): fails when another pipe wrote one
// of them and no flag since orders that write before this pipe.
inline void PipeReads(Pipe pipe, const char* what, const void* data, uint64_t bytes, SourceLine where) {
  uint64_t first, last;
  if (!UbBlocks(data, bytes, first, last)) return;
  PipeOrder& order = Order();
  const PipeClock& known = order.clocks[static_cast<int>(pipe)];
  for (uint64_t b = first; b < last; ++b) {
    const BlockWrite& w = order.blocks[b];
    if (w.time == 0 || w.pipe == pipe || known[static_cast<int>(w.pipe)] >= w.time) continue;
    const std::string event = std::string(PipeName(w.pipe)) + "_" + PipeName(pipe);
    Fail("pipe hazard, a race between the pipes of this core: " + std::string(what) + " (" + PipeName(pipe) +
             ") reads UB bytes from " + std::to_string(b * kOrderBlock) + " on, which " + w.what + " (" +
             PipeName(w.pipe) + ") at " + w.where.file + ":" + std::to_string(w.where.line) +
             " wrote, with no WaitFlag<HardEvent::" + event + "> (nor TQue EnQue/DeQue) between them: on the device " +
             PipeName(pipe) + " may read them before " + PipeName(w.pipe) + " has written them. Put SetFlag<HardEvent::" +
             event + ">(id) after the write and WaitFlag<HardEvent::" + event + ">(id) before this read",
         where);
  }
}

inline PipeClock& FlagSlot(Pipe src, Pipe dst, int32_t id) {
  return Order().flags[(static_cast<int>(src) * kPipes + static_cast<int>(dst)) * 8 + (id & 7)];
}

// SetFlag<src_dst>(id): what `src` has done so far is what the wait will order.
inline void PipeSignal(Pipe src, Pipe dst, int32_t id) {
  PipeOrder& order = Order();
  PipeClock snapshot = order.clocks[static_cast<int>(src)];
  snapshot[static_cast<int>(src)] = order.now;
  FlagSlot(src, dst, id) = snapshot;
}

// WaitFlag<src_dst>(id): `dst` goes on knowing what `src` had done at the SetFlag.
inline void PipeAwait(Pipe src, Pipe dst, int32_t id) { Merge(Order().clocks[static_cast<int>(dst)], FlagSlot(src, dst, id)); }

// PipeBarrier<PIPE_ALL>: every pipe knows everything done so far.
inline void PipeBarrierAll() {
  PipeOrder& order = Order();
  PipeClock all{};
  for (const PipeClock& clock : order.clocks) Merge(all, clock);
  for (int p = 0; p < kPipes; ++p) all[p] = order.now;
  for (PipeClock& clock : order.clocks) clock = all;
}

}  // namespace AscendC::detail

#endif  // PYPTO_SIM_ASCENDC_PIPE_ORDER_H_
