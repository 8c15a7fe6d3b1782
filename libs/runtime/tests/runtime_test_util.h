// Helpers the runtime's test files share: int32 tensors over test data, the descriptor a kernel
// received, and a rendezvous that turns an accidental serialisation into a failure, not a hang.
#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "pypto/runtime/runtime.h"

namespace pypto::rt::testing {

// Releases its callers once `count` of them have arrived, or reports failure after a timeout.
class Rendezvous {
 public:
  explicit Rendezvous(int count) : count_(count) {}
  bool ArriveAndWait() {
    std::unique_lock lock(mu_);
    ++arrived_;
    cv_.notify_all();
    return cv_.wait_for(lock, std::chrono::seconds(5), [&] { return arrived_ >= count_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int count_;
  int arrived_ = 0;
};

inline ChipTensor IntTensor(std::vector<int32_t>& data) {
  const std::array<uint32_t, 1> shape = {static_cast<uint32_t>(data.size())};
  return MakeExternalTensor(data.data(), shape, PYPTO_RT_INT32);
}

inline const ChipTensor& TensorArgOf(const KernelLaunch& launch, int index) {
  return *reinterpret_cast<const ChipTensor*>(launch.args[index]);
}

}  // namespace pypto::rt::testing
