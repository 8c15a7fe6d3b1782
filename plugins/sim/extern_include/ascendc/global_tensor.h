// GlobalTensor<T>: a typed view of GM (the host memory the runtime hands the kernel). Reads and writes
// through it are plain loads and stores: the host is coherent, so the seed-002 trap of a stale scalar
// read does not happen here.
#ifndef PYPTO_SIM_ASCENDC_GLOBAL_TENSOR_H_
#define PYPTO_SIM_ASCENDC_GLOBAL_TENSOR_H_

#include <cstdint>

#include "ascendc/keywords.h"

namespace AscendC {

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
  T GetValue(uint64_t offset) const { return data_[offset]; }
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
