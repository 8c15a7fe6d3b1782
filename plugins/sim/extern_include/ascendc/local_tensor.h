// LocalTensor<T>: a typed view of a core's local memory (on the vector core, its UB), as TQue/TBuf
// hand it out. Element access is direct: `data` points into the simulator's UB of this core.
#ifndef PYPTO_SIM_ASCENDC_LOCAL_TENSOR_H_
#define PYPTO_SIM_ASCENDC_LOCAL_TENSOR_H_

#include <cstdint>

#include "ascendc/position.h"
#include "ascendc/scalar_types.h"

namespace AscendC {

template <typename T>
class LocalTensor {
 public:
  using PrimType = T;

  LocalTensor() = default;
  LocalTensor(T* data, uint32_t size, TPosition position) : data_(data), size_(size), position_(position) {}

  T GetValue(uint32_t index) const { return data_[index]; }
  void SetValue(uint32_t index, T value) const { data_[index] = value; }
  T& operator()(uint32_t index) const { return data_[index]; }
  // The view from `offset` elements on.
  LocalTensor operator[](uint32_t offset) const {
    return LocalTensor(data_ + offset, size_ > offset ? size_ - offset : 0, position_);
  }

  uint32_t GetSize() const { return size_; }  // elements
  void SetSize(uint32_t size) { size_ = size; }
  uint32_t GetLength() const { return size_ * static_cast<uint32_t>(sizeof(T)); }  // bytes
  TPosition GetPosition() const { return position_; }
  T* GetPhyAddr() const { return data_; }
  T* GetPhyAddr(uint32_t offset) const { return data_ + offset; }

  // The same bytes as elements of U.
  template <typename U>
  LocalTensor<U> ReinterpretCast() const {
    return LocalTensor<U>(reinterpret_cast<U*>(data_), static_cast<uint32_t>(size_ * sizeof(T) / sizeof(U)),
                          position_);
  }

 private:
  T* data_ = nullptr;
  uint32_t size_ = 0;
  TPosition position_ = TPosition::VECCALC;
};

}  // namespace AscendC

#endif  // PYPTO_SIM_ASCENDC_LOCAL_TENSOR_H_
