// The shape-based reductions of a 2-D tensor: ReduceSum/ReduceMax/ReduceMin<T, Pattern::Reduce::AR
// or RA, isReuseSource>(dst, src[, tmp], srcShape, srcInnerPad). srcShape is {rows, cols}; with
// srcInnerPad each row of src is padded to 32 bytes, so rows lie RoundUp(cols, 32 / sizeof(T))
// elements apart, else cols apart. AR reduces every row to one value (dst[r]); RA every column
// (dst[c]). The temporary buffer is not needed here and is left alone. Sums accumulate in float.
#ifndef PYPTO_SIM_ASCENDC_REDUCE_PATTERN_H_
#define PYPTO_SIM_ASCENDC_REDUCE_PATTERN_H_

#include <cstdint>
#include <type_traits>

#include "ascendc/local_tensor.h"
#include "ascendc/reduce.h"

namespace AscendC {

namespace Pattern::Reduce {
struct AR {};  // reduce the last axis
struct RA {};  // reduce the first axis
}  // namespace Pattern::Reduce

namespace detail {

template <typename T, typename Pattern>
inline void ReduceShaped(ReduceKind kind, const LocalTensor<T>& dst, const LocalTensor<T>& src,
                         const uint32_t shape[], bool inner_pad) {
  static_assert(std::is_same_v<Pattern, AscendC::Pattern::Reduce::AR> ||
                    std::is_same_v<Pattern, AscendC::Pattern::Reduce::RA>,
                "Pattern::Reduce::AR or Pattern::Reduce::RA");
  const uint32_t rows = shape[0], cols = shape[1];
  constexpr uint32_t block = 32 / sizeof(T);
  const uint32_t pitch = inner_pad ? (cols + block - 1) / block * block : cols;
  constexpr bool by_row = std::is_same_v<Pattern, AscendC::Pattern::Reduce::AR>;
  const uint32_t results = by_row ? rows : cols, length = by_row ? cols : rows;
  for (uint32_t out = 0; out < results; ++out) {
    Reduction<T> r{kind};
    for (uint32_t i = 0; i < length; ++i)
      r.Add(Widen(src.GetValue(by_row ? out * pitch + i : i * pitch + out)), i);
    dst.SetValue(out, Narrow<T>(r.value));
  }
}

}  // namespace detail

#define PYPTO_SIM_ASCENDC_SHAPED_REDUCE(name, kind)                                                          \
  template <typename T, typename Pattern, bool isReuseSource = false>                                         \
  inline void name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>& tmp,     \
                   const uint32_t srcShape[], bool srcInnerPad) {                                             \
    (void)tmp;                                                                                                \
    detail::ReduceShaped<T, Pattern>(detail::ReduceKind::kind, dst, src, srcShape, srcInnerPad);              \
  }                                                                                                           \
  template <typename T, typename Pattern, bool isReuseSource = false>                                         \
  inline void name(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t srcShape[],           \
                   bool srcInnerPad) {                                                                        \
    detail::ReduceShaped<T, Pattern>(detail::ReduceKind::kind, dst, src, srcShape, srcInnerPad);              \
  }

PYPTO_SIM_ASCENDC_SHAPED_REDUCE(ReduceSum, Sum)
PYPTO_SIM_ASCENDC_SHAPED_REDUCE(ReduceMax, Max)
PYPTO_SIM_ASCENDC_SHAPED_REDUCE(ReduceMin, Min)
#undef PYPTO_SIM_ASCENDC_SHAPED_REDUCE

}  // namespace AscendC

#endif  // PYPTO_SIM_ASCENDC_REDUCE_PATTERN_H_
