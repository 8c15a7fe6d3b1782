// TPipe, TQue, TQueBind and TBuf: AscendC's allocation of a core's local memory. A TPipe hands out
// UB from its start, one InitBuffer after the other, each buffer rounded up to 32 bytes; a queue
// cycles its `num` buffers through AllocTensor -> EnQue -> DeQue -> FreeTensor; a TBuf is scratch
// with no queue. The memories are this core's, from the simulator (pypto_sim_core.h): all 192 KiB of
// UB on A2/A3 and the cube's L1/L0 buffers; a TPipe whose buffers do not fit is a failed run naming
// the buffer and the InitBuffer line (seed 002's UB overflow trap), where the device would silently
// wrap or fault.
#ifndef PYPTO_SIM_ASCENDC_TPIPE_H_
#define PYPTO_SIM_ASCENDC_TPIPE_H_

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "ascendc/core_context.h"
#include "ascendc/local_tensor.h"
#include "ascendc/pipe_order.h"

namespace AscendC {

namespace detail {

inline constexpr uint32_t kUbAlign = 32;
inline constexpr uint32_t kMaxQueueBuffers = 64;

// What a TPipe tells the buffers it placed: where it was constructed and whether it placed any buffer
// outside UB, for the trap of a TPipe on the cube in a vector-only phase (seed 002, section 3).
struct PipeOrigin {
  SourceLine created{};
  bool cube_buffer = false;
};

// On the device a TPipe constructed on the cube sets the cube up for the vector cores' UB and hangs it
// (AscendC's TPipe constructor inserts synchronization). What is observable here: a buffer at a UB
// position handed out on a cube (AIC) core by a TPipe that has placed only UB buffers, i.e. a TPipe
// that exists on the cube for a vector-only phase. A TPipe that also places L1/L0 buffers (the Qwen3
// kernel's Arch::Resource builds every position on both cores) is the cube's own and passes.
inline void CheckVectorPipeOnCube(const PipeOrigin* origin, TPosition position, const char* what,
                                  SourceLine where) {
  if (!origin || origin->cube_buffer || !IsUbPosition(position)) return;
  const PyptoSimCore& core = Core(where);
  if (core.core_type != 0) return;
  Fail(std::string("this TPipe is constructed on the cube (AIC) core and places UB buffers only (") + what + " of a " +
           PositionName(position) + " buffer at " + where.file + ":" + std::to_string(where.line) +
           "): on the device a TPipe on the cube drags it into the vector-only UB setup and hangs it. Construct the "
           "TPipe of a vector-only phase on the vector cores only, under #ifdef __DAV_C220_VEC__",
       origin->created);
}

// The buffers InitBuffer gave one queue or TBuf, and which of them are taken.
class LocalBuffers {
 public:
  bool initialized() const { return base_ != nullptr; }
  uint32_t length() const { return length_; }
  uint32_t count() const { return count_; }

  void Assign(unsigned char* base, uint32_t count, uint32_t length, TPosition position,
              std::shared_ptr<const PipeOrigin> origin) {
    origin_ = std::move(origin);
    base_ = base;
    count_ = count;
    length_ = length;
    position_ = position;
    allocated_ = 0;
    head_ = size_ = 0;
  }

  template <typename T>
  LocalTensor<T> View(uint32_t index, uint32_t byte_offset, uint32_t elements) const {
    return LocalTensor<T>(reinterpret_cast<T*>(base_ + index * length_ + byte_offset), elements, position_);
  }

  template <typename T>
  LocalTensor<T> Alloc(const char* what, SourceLine where) {
    Require(what, where);
    for (uint32_t i = 0; i < count_; ++i) {
      if (allocated_ & (1ull << i)) continue;
      allocated_ |= 1ull << i;
      return View<T>(i, 0, length_ / static_cast<uint32_t>(sizeof(T)));
    }
    Fail(std::string(what) + ": all " + std::to_string(count_) +
             " buffers of this queue are allocated and none was freed (a FreeTensor is missing; on the device "
             "AllocTensor waits for one forever)",
         where);
  }

  void Free(const void* data, const char* what, SourceLine where) {
    const uint32_t index = IndexOf(data, what, where);
    if (!(allocated_ & (1ull << index)))
      Fail(std::string(what) + ": buffer " + std::to_string(index) + " of this queue is not allocated (freed twice?)",
           where);
    allocated_ &= ~(1ull << index);
  }

  void Push(const void* data, const char* what, SourceLine where) {
    const uint32_t index = IndexOf(data, what, where);
    if (size_ == count_)
      Fail(std::string(what) + ": the queue already holds all " + std::to_string(count_) + " of its buffers", where);
    queue_[(head_ + size_++) % kMaxQueueBuffers] = index;
  }

  template <typename T>
  LocalTensor<T> Pop(const char* what, SourceLine where) {
    Require(what, where);
    if (size_ == 0)
      Fail(std::string(what) + ": the queue is empty (no EnQue before this DeQue; on the device it waits forever)",
           where);
    const uint32_t index = queue_[head_];
    head_ = (head_ + 1) % kMaxQueueBuffers;
    --size_;
    return View<T>(index, 0, length_ / static_cast<uint32_t>(sizeof(T)));
  }

  uint32_t queued() const { return size_; }
  bool has_idle() const {
    for (uint32_t i = 0; i < count_; ++i)
      if (!(allocated_ & (1ull << i))) return true;
    return false;
  }

  void Require(const char* what, SourceLine where) const {
    if (!initialized()) Fail(std::string(what) + ": this queue or buffer has had no TPipe::InitBuffer", where);
    CheckVectorPipeOnCube(origin_.get(), position_, what, where);
  }

 private:
  uint32_t IndexOf(const void* data, const char* what, SourceLine where) const {
    Require(what, where);
    const auto* bytes = static_cast<const unsigned char*>(data);
    if (bytes < base_ || bytes >= base_ + static_cast<uint64_t>(count_) * length_ || (bytes - base_) % length_ != 0)
      Fail(std::string(what) + ": the tensor is not a buffer of this queue", where);
    return static_cast<uint32_t>((bytes - base_) / length_);
  }

  std::shared_ptr<const PipeOrigin> origin_;
  unsigned char* base_ = nullptr;
  uint32_t count_ = 0;
  uint32_t length_ = 0;
  TPosition position_ = TPosition::VECCALC;
  uint64_t allocated_ = 0;  // bit i: buffer i is between AllocTensor and FreeTensor
  uint32_t queue_[kMaxQueueBuffers] = {};
  uint32_t head_ = 0;
  uint32_t size_ = 0;
};

}  // namespace detail

namespace detail {

// The pipes a queue hands its buffers between, as its EnQue/DeQue synchronize them on the device: a
// VECIN queue from MTE2 (the copy in) to V, a VECOUT one from V to MTE3 (the copy out), a VECIN ->
// VECOUT bind from MTE2 to MTE3. Other queues order nothing this check follows (ordered = false).
struct QueuePipes {
  bool ordered;
  Pipe producer, consumer;
};

inline constexpr QueuePipes QueuePipesOf(TPosition src, TPosition dst) {
  const TPosition from = src == TPosition::GM ? dst : src;
  const TPosition to = dst == TPosition::GM ? src : dst;
  if (from == TPosition::VECIN && to == TPosition::VECOUT) return {true, Pipe::MTE2, Pipe::MTE3};
  if (from == TPosition::VECIN && to == TPosition::VECIN) return {true, Pipe::MTE2, Pipe::V};
  if (from == TPosition::VECOUT && to == TPosition::VECOUT) return {true, Pipe::V, Pipe::MTE3};
  return {false, Pipe::S, Pipe::S};
}

}  // namespace detail

template <TPosition src, TPosition dst, int32_t depth, auto mask = 0>
class TQueBind {
 public:
  static constexpr TPosition kPosition = src == TPosition::GM ? dst : src;
  static constexpr detail::QueuePipes kPipes = detail::QueuePipesOf(src, dst);

  template <typename T>
  LocalTensor<T> AllocTensor(detail::SourceLine where = detail::SourceLine::Here()) {
    return buffers_.template Alloc<T>("TQue::AllocTensor", where);
  }
  template <typename T>
  void FreeTensor(LocalTensor<T>& tensor, detail::SourceLine where = detail::SourceLine::Here()) {
    buffers_.Free(tensor.GetPhyAddr(), "TQue::FreeTensor", where);
  }
  template <typename T>
  bool EnQue(const LocalTensor<T>& tensor, detail::SourceLine where = detail::SourceLine::Here()) {
    buffers_.Push(tensor.GetPhyAddr(), "TQue::EnQue", where);
    if (kPipes.ordered) {  // the SetFlag EnQue is on the device
      detail::PipeClock snapshot = detail::Order().clocks[static_cast<int>(kPipes.producer)];
      snapshot[static_cast<int>(kPipes.producer)] = detail::Order().now;
      enqueued_.push_back(snapshot);
    }
    return true;
  }
  template <typename T>
  LocalTensor<T> DeQue(detail::SourceLine where = detail::SourceLine::Here()) {
    LocalTensor<T> tensor = buffers_.template Pop<T>("TQue::DeQue", where);
    if (kPipes.ordered && !enqueued_.empty()) {  // and the WaitFlag of DeQue
      detail::Merge(detail::Order().clocks[static_cast<int>(kPipes.consumer)], enqueued_.front());
      enqueued_.pop_front();
    }
    return tensor;
  }
  bool VacantInQue() const { return buffers_.queued() < static_cast<uint32_t>(depth); }
  bool HasTensorInQue() const { return buffers_.queued() > 0; }
  int32_t GetTensorCountInQue() const { return static_cast<int32_t>(buffers_.queued()); }
  bool HasIdleBuffer() const { return buffers_.has_idle(); }
  void FreeAllEvent() {}

  detail::LocalBuffers& buffers() { return buffers_; }

 private:
  detail::LocalBuffers buffers_;
  std::deque<detail::PipeClock> enqueued_;  // what the producer had done at each EnQue still queued
};

template <TPosition position, int32_t depth = 1, auto mask = 0>
class TQue : public TQueBind<position, position, depth, mask> {};

template <TPosition position = TPosition::VECCALC>
class TBuf {
 public:
  static constexpr TPosition kPosition = position;

  // The whole buffer, or its first `elements`.
  template <typename T>
  LocalTensor<T> Get(detail::SourceLine where = detail::SourceLine::Here()) {
    buffers_.Require("TBuf::Get", where);
    return buffers_.template View<T>(0, 0, buffers_.length() / static_cast<uint32_t>(sizeof(T)));
  }
  template <typename T>
  LocalTensor<T> Get(uint32_t elements, detail::SourceLine where = detail::SourceLine::Here()) {
    CheckRange(0, elements * sizeof(T), "TBuf::Get", where);
    return buffers_.template View<T>(0, 0, elements);
  }
  // `elements` of T from byte `byte_offset` of the buffer.
  template <typename T>
  LocalTensor<T> GetWithOffset(uint32_t elements, uint32_t byte_offset,
                               detail::SourceLine where = detail::SourceLine::Here()) {
    CheckRange(byte_offset, elements * sizeof(T), "TBuf::GetWithOffset", where);
    return buffers_.template View<T>(0, byte_offset, elements);
  }

  detail::LocalBuffers& buffers() { return buffers_; }

 private:
  void CheckRange(uint64_t offset, uint64_t bytes, const char* what, detail::SourceLine where) const {
    buffers_.Require(what, where);
    if (offset + bytes > buffers_.length())
      detail::Fail(std::string(what) + ": bytes [" + std::to_string(offset) + ", " + std::to_string(offset + bytes) +
                       ") leave the buffer's " + std::to_string(buffers_.length()) + " bytes (TPipe::InitBuffer)",
                   where);
  }

  detail::LocalBuffers buffers_;
};

namespace detail {

// The local memory behind a TPosition: the vector core's UB (VECIN/VECOUT/VECCALC), the cube's L1
// (A1/B1/C1/TSCM), L0A (A2), L0B (B2), L0C (CO1), bias table (C2) and fixpipe buffer (C2PIPE2GM).
struct LocalMemory {
  int slot;  // which running offset of a TPipe
  const char* name;
  unsigned char* base;
  int64_t bytes;
};

// A core that lacks a buffer (the cube's L1 on a vector core: kernels like the Qwen3 attention build
// every position's TBuf on both cores and use only their own) gets this thread's own, sized as on
// A2/A3, so that the addresses are valid.
template <int kSlot>
inline unsigned char* SpareBuffer(int64_t bytes) {
  thread_local std::unique_ptr<unsigned char[]> buffer;
  if (!buffer) buffer.reset(new unsigned char[static_cast<size_t>(bytes)]());
  return buffer.get();
}

inline LocalMemory MemoryOf(TPosition position, const PyptoSimCore& core) {
  const bool cube = core.abi >= 2;
  auto pick = [](int slot, const char* name, unsigned char* base, int64_t bytes, int64_t a2a3_bytes,
                 unsigned char* (*spare)(int64_t)) {
    if (base) return LocalMemory{slot, name, base, bytes};
    return LocalMemory{slot, name, spare(a2a3_bytes), a2a3_bytes};
  };
  switch (position) {
    case TPosition::VECIN:
    case TPosition::VECOUT:
    case TPosition::VECCALC: return pick(0, "UB", core.ub, core.ub_bytes, 192 * 1024, SpareBuffer<0>);
    case TPosition::A1:
    case TPosition::B1:
    case TPosition::C1:
    case TPosition::TSCM:
      return pick(1, "L1", cube ? core.l1 : nullptr, cube ? core.l1_bytes : 0, 512 * 1024, SpareBuffer<1>);
    case TPosition::A2:
      return pick(2, "L0A", cube ? core.l0a : nullptr, cube ? core.l0a_bytes : 0, 64 * 1024, SpareBuffer<2>);
    case TPosition::B2:
      return pick(3, "L0B", cube ? core.l0b : nullptr, cube ? core.l0b_bytes : 0, 64 * 1024, SpareBuffer<3>);
    case TPosition::CO1:
      return pick(4, "L0C", cube ? core.l0c : nullptr, cube ? core.l0c_bytes : 0, 128 * 1024, SpareBuffer<4>);
    case TPosition::C2:
      return pick(5, "the bias table", cube ? core.bias : nullptr, cube ? core.bias_bytes : 0, 1024, SpareBuffer<5>);
    case TPosition::C2PIPE2GM: return pick(6, "the fixpipe buffer", nullptr, 0, 7 * 1024, SpareBuffer<6>);
    default: return LocalMemory{-1, PositionName(position), nullptr, 0};
  }
}

inline constexpr int kLocalMemories = 7;

}  // namespace detail

class TPipe;
namespace detail {
inline thread_local TPipe* t_pipe = nullptr;  // the TPipe constructed last on this core (GetTPipePtr)
}

// The allocator of a core's local memories. Each memory (UB; L1, L0A, L0B, L0C, bias table,
// fixpipe buffer) is handed out from its byte 0 in InitBuffer order.
class TPipe {
 public:
  TPipe(detail::SourceLine where = detail::SourceLine::Here()) {
    origin_->created = where;
    detail::t_pipe = this;
  }
  ~TPipe() {
    if (detail::t_pipe == this) detail::t_pipe = nullptr;
  }
  TPipe(const TPipe&) = delete;
  TPipe& operator=(const TPipe&) = delete;

  // `num` buffers of `len` bytes each for a queue.
  template <TPosition src, TPosition dst, int32_t depth, auto mask>
  bool InitBuffer(TQueBind<src, dst, depth, mask>& que, uint8_t num, uint32_t len,
                  detail::SourceLine where = detail::SourceLine::Here()) {
    return Place(que.buffers(), TQueBind<src, dst, depth, mask>::kPosition, "TQue", num, len, where);
  }
  template <TPosition position>
  bool InitBuffer(TBuf<position>& buf, uint32_t len, detail::SourceLine where = detail::SourceLine::Here()) {
    return Place(buf.buffers(), position, "TBuf", 1, len, where);
  }

  // Gives the memories back: later InitBuffers start from their beginning again. Buffers already
  // handed out stay usable (the Qwen3 kernel destroys its TPipe and keeps its TBufs).
  void Reset() { used_ = {}; }
  void Destroy() { used_ = {}; }
  void Init() {}

  template <typename... Ts>
  int8_t AllocEventID() { return 0; }
  template <typename... Ts>
  void ReleaseEventID(int8_t) {}
  template <typename... Ts>
  int8_t FetchEventID() { return 0; }

 private:
  bool Place(detail::LocalBuffers& buffers, TPosition position, const char* kind, uint32_t num, uint32_t len,
             detail::SourceLine where) {
    const PyptoSimCore& core = detail::Core(where);
    ++placed_;
    const std::string buffer = "buffer #" + std::to_string(placed_) + " of this TPipe (a " + kind + " at " +
                               detail::PositionName(position) + ", " + std::to_string(num) + " x " +
                               std::to_string(len) + " bytes)";
    const detail::LocalMemory memory = detail::MemoryOf(position, core);
    if (memory.slot < 0)
      detail::Fail("TPipe::InitBuffer of " + buffer + ": this position has no local memory here", where);
    if (num == 0 || num > detail::kMaxQueueBuffers)
      detail::Fail("TPipe::InitBuffer of " + buffer + ": a queue holds 1 to " +
                       std::to_string(detail::kMaxQueueBuffers) + " buffers",
                   where);
    uint64_t& used = used_[static_cast<size_t>(memory.slot)];
    const uint64_t length = (static_cast<uint64_t>(len) + detail::kUbAlign - 1) / detail::kUbAlign * detail::kUbAlign;
    const uint64_t end = used + num * length;
    if (end > static_cast<uint64_t>(memory.bytes))
      detail::Fail("TPipe::InitBuffer of " + buffer + " overflows " + memory.name + ": this TPipe's buffers would "
                       "end at byte " + std::to_string(end) + " (" + std::to_string(used) +
                       " taken by the buffers before it), but " + memory.name + " holds " +
                       std::to_string(memory.bytes) + " bytes. Shrink the tiles or use fewer buffers",
                   where);
    if (!detail::IsUbPosition(position)) origin_->cube_buffer = true;
    buffers.Assign(memory.base + used, num, static_cast<uint32_t>(length), position, origin_);
    used = end;
    return true;
  }

  std::array<uint64_t, detail::kLocalMemories> used_{};
  uint32_t placed_ = 0;
  // Shared with the buffers it placed, which outlive a TPipe destroyed early (Qwen3's Arch::Resource).
  std::shared_ptr<detail::PipeOrigin> origin_ = std::make_shared<detail::PipeOrigin>();
};

// The TPipe this core constructed last (AscendC kernels reach it from helper classes).
inline TPipe* GetTPipePtr() { return detail::t_pipe; }

}  // namespace AscendC

// CANN declares GetTPipePtr outside the namespace too; kernels call it unqualified.
using AscendC::GetTPipePtr;

#endif  // PYPTO_SIM_ASCENDC_TPIPE_H_
