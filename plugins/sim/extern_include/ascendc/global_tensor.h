// GlobalTensor<T>: a typed view of GM (the host memory the runtime hands the kernel). Reads and writes
// through it are plain loads and stores: the host is coherent, so the seed-002 trap of a stale scalar
// read (section 4) does not happen here. It is reported instead: GetValue, a scalar read of GM, warns
// once per kernel and line (PyptoSimCore::warn), with the coherent way to read it.
#ifndef PYPTO_SIM_ASCENDC_GLOBAL_TENSOR_H_
#define PYPTO_SIM_ASCENDC_GLOBAL_TENSOR_H_

#include <cstdint>
#include <set>
#include <string>
#include <utility>

#include "ascendc/core_context.h"
#include "ascendc/keywords.h"

namespace AscendC {
namespace detail {

// On the device a scalar read of GM goes through the core's data cache, which is not coherent with
// what the host wrote into the task's inputs: it may read a stale line. The simulator reads the right
// value, so this is a warning, once per line for this thread (the simulator keeps one per kernel).
inline void WarnScalarGmRead(SourceLine where) {
  thread_local std::set<std::pair<const char*, int>> warned;
  if (!warned.emplace(where.file, where.line).second) return;
  const PyptoSimCore* core = BoundCore();
  if (!core || core->abi < 3 || !core->warn) return;
  const std::string message =
      std::string(where.file) + ":" + std::to_string(where.line) +
      ": GlobalTensor::GetValue reads GM with a scalar load, which on the device goes through the core's cache and "
      "is not coherent with what the host wrote: it may read a stale value (the simulator reads the right one). "
      "Copy the data into UB with DataCopy, then SetFlag<HardEvent::MTE2_S> and WaitFlag<HardEvent::MTE2_S>, and "
      "read it with LocalTensor::GetValue";
  core->warn(core->host, message.c_str());
}

}  // namespace detail

enum class CacheMode : uint8_t { CACHE_MODE_DISABLE, CACHE_MODE_NORMAL, CACHE_MODE_LAST, CACHE_MODE_PERSISTENT };

template <typename T>
class GlobalTensor {
 public:
  using PrimType = T;

  void SetGlobalBuffer(__gm__ T* buffer, uint64_t size = 0) {
    data_ = buffer;
    size_ = size;
  }
  __gm__ T* GetPhyAddr() const { return data_; }
  __gm__ T* GetPhyAddr(uint64_t offset) const { return data_ + offset; }
  T GetValue(uint64_t offset, detail::SourceLine where = detail::SourceLine::Here()) const {
    detail::WarnScalarGmRead(where);
    return data_[offset];
  }
  void SetValue(uint64_t offset, T value) const { data_[offset] = value; }
  T& operator()(uint64_t offset) const { return data_[offset]; }
  uint64_t GetSize() const { return size_; }
  void SetShapeInfo(...) {}
  template <CacheMode mode = CacheMode::CACHE_MODE_NORMAL>
  void SetL2CacheHint(...) {}

  // The view from `offset` elements on.
  GlobalTensor operator[](uint64_t offset) const {
    GlobalTensor view;
    view.data_ = data_ + offset;
    view.size_ = size_ > offset ? size_ - offset : 0;
    return view;
  }

 private:
  __gm__ T* data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace AscendC

#endif  // PYPTO_SIM_ASCENDC_GLOBAL_TENSOR_H_
