// TPipe, TQue, TQueBind and TBuf: AscendC's allocation of a core's local memory. A TPipe hands out
// UB from its start, one InitBuffer after the other, each buffer rounded up to 32 bytes; a queue
// cycles its `num` buffers through AllocTensor -> EnQue -> DeQue -> FreeTensor; a TBuf is scratch
// with no queue. The UB is this core's, from the simulator (pypto_sim_core.h), sized by the SoC
// table; a TPipe whose buffers do not fit is a failed run naming the buffer and the InitBuffer line
// (seed 002's UB overflow trap), where the device would silently wrap or fault.
#ifndef PYPTO_SIM_ASCENDC_TPIPE_H_
#define PYPTO_SIM_ASCENDC_TPIPE_H_

#include <cstdint>
#include <string>

#include "ascendc/core_context.h"
#include "ascendc/local_tensor.h"

namespace AscendC {

namespace detail {

inline constexpr uint32_t kUbAlign = 32;
inline constexpr uint32_t kMaxQueueBuffers = 64;

// The buffers InitBuffer gave one queue or TBuf, and which of them are taken.
class LocalBuffers {
 public:
  bool initialized() const { return base_ != nullptr; }
  uint32_t length() const { return length_; }
  uint32_t count() const { return count_; }

  void Assign(unsigned char* base, uint32_t count, uint32_t length, TPosition position) {
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
  }

 private:
  uint32_t IndexOf(const void* data, const char* what, SourceLine where) const {
    Require(what, where);
    const auto* bytes = static_cast<const unsigned char*>(data);
    if (bytes < base_ || bytes >= base_ + static_cast<uint64_t>(count_) * length_ || (bytes - base_) % length_ != 0)
      Fail(std::string(what) + ": the tensor is not a buffer of this queue", where);
    return static_cast<uint32_t>((bytes - base_) / length_);
  }

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

template <TPosition src, TPosition dst, int32_t depth, auto mask = 0>
class TQueBind {
 public:
  static constexpr TPosition kPosition = src == TPosition::GM ? dst : src;

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
    return true;
  }
  template <typename T>
  LocalTensor<T> DeQue(detail::SourceLine where = detail::SourceLine::Here()) {
    return buffers_.template Pop<T>("TQue::DeQue", where);
  }
  bool VacantInQue() const { return buffers_.queued() < static_cast<uint32_t>(depth); }
  bool HasTensorInQue() const { return buffers_.queued() > 0; }
  int32_t GetTensorCountInQue() const { return static_cast<int32_t>(buffers_.queued()); }
  bool HasIdleBuffer() const { return buffers_.has_idle(); }
  void FreeAllEvent() {}

  detail::LocalBuffers& buffers() { return buffers_; }

 private:
  detail::LocalBuffers buffers_;
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

class TPipe {
 public:
  TPipe() = default;

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

  // Gives the UB back: later InitBuffers start from its beginning again.
  void Reset() { used_ = 0; }
  void Destroy() { used_ = 0; }
  void Init() {}

  template <typename... Ts>
  int8_t AllocEventID() { return 0; }
  template <typename... Ts>
  void ReleaseEventID(int8_t) {}
  template <typename... Ts>
  int8_t FetchEventID() { return 0; }

  uint64_t used_bytes() const { return used_; }

 private:
  bool Place(detail::LocalBuffers& buffers, TPosition position, const char* kind, uint32_t num, uint32_t len,
             detail::SourceLine where) {
    const PyptoSimCore& core = detail::Core(where);
    ++placed_;
    const std::string buffer = "buffer #" + std::to_string(placed_) + " of this TPipe (a " + kind + " at " +
                               detail::PositionName(position) + ", " + std::to_string(num) + " x " +
                               std::to_string(len) + " bytes)";
    if (!detail::IsUbPosition(position))
      detail::Fail("TPipe::InitBuffer of " + buffer + ": only the vector core's UB positions (VECIN, VECOUT, "
                   "VECCALC) are simulated so far",
                   where);
    if (!core.ub)
      detail::Fail("TPipe::InitBuffer of " + buffer + " on the cube core, which has no UB: keep a vector-only "
                   "TPipe under #ifdef __DAV_C220_VEC__",
                   where);
    if (num == 0 || num > detail::kMaxQueueBuffers)
      detail::Fail("TPipe::InitBuffer of " + buffer + ": a queue holds 1 to " +
                       std::to_string(detail::kMaxQueueBuffers) + " buffers",
                   where);
    const uint64_t length = (static_cast<uint64_t>(len) + detail::kUbAlign - 1) / detail::kUbAlign * detail::kUbAlign;
    const uint64_t end = used_ + num * length;
    if (end > static_cast<uint64_t>(core.ub_bytes))
      detail::Fail("TPipe::InitBuffer of " + buffer + " overflows UB: this TPipe's buffers would end at byte " +
                       std::to_string(end) + " (" + std::to_string(used_) + " taken by the buffers before it), "
                       "but the vector core's UB holds " + std::to_string(core.ub_bytes) +
                       " bytes. Shrink the tiles or use fewer buffers",
                   where);
    buffers.Assign(core.ub + used_, num, static_cast<uint32_t>(length), position);
    used_ = end;
    return true;
  }

  uint64_t used_ = 0;
  uint32_t placed_ = 0;
};

}  // namespace AscendC

#endif  // PYPTO_SIM_ASCENDC_TPIPE_H_
