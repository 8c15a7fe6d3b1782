// The UB bytes a vector instruction reads and writes, for the pipe-hazard check (pipe_order.h): the
// count form's `count` elements, or the repeat form's span from the operand's start to the end of its
// last repeat's last block.
#ifndef PYPTO_SIM_ASCENDC_VECTOR_ORDER_H_
#define PYPTO_SIM_ASCENDC_VECTOR_ORDER_H_

#include <cstdint>

#include "ascendc/local_tensor.h"
#include "ascendc/pipe_order.h"
#include "ascendc/vector_mask.h"

namespace AscendC::detail {

// Bytes of an operand of T that `repeats` repeats of `lanes` lanes each span, strides in blocks.
template <typename T>
inline uint64_t RepeatSpanBytes(uint32_t repeats, int lanes, uint32_t blk_stride, uint32_t rep_stride) {
  if (repeats == 0) return 0;
  const uint64_t blocks = (uint64_t(lanes) * sizeof(T) + 31) / 32;
  return ((uint64_t{repeats} - 1) * rep_stride + (blocks - 1) * blk_stride + 1) * 32;
}

template <typename T>
inline void VectorReads(const char* what, const LocalTensor<T>& src, uint64_t bytes, SourceLine where) {
  PipeReads(Pipe::V, what, src.GetPhyAddr(), bytes, where);
}
template <typename T>
inline void VectorWrote(const char* what, const LocalTensor<T>& dst, uint64_t bytes, SourceLine where) {
  PipeWrote(Pipe::V, what, dst.GetPhyAddr(), bytes, where);
}

}  // namespace AscendC::detail

#endif  // PYPTO_SIM_ASCENDC_VECTOR_ORDER_H_
