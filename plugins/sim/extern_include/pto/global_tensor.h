// A tensor in global memory as pto-isa describes it: a typed pointer with a five-dimensional Shape and
// Stride (in elements), each extent either a template constant or DYNAMIC and given at construction.
// TLOAD/TSTORE read it as a 2-D view: the last dimension is the columns, the first four the rows.
#ifndef PYPTO_SIM_PTO_GLOBAL_TENSOR_H_
#define PYPTO_SIM_PTO_GLOBAL_TENSOR_H_

#include <cstdint>
#include <type_traits>

#include "pto/address_spaces.h"
#include "pto/types.h"

namespace pto {
namespace sim {

// The five extents of a Shape or Stride: the constants, then the dynamic ones from `values` (one per
// DYNAMIC entry, in order, or one per dimension with the constants' positions ignored).
template <typename... Ints>
void FillExtents(int64_t (&out)[5], const int64_t (&fixed)[5], int64_t fallback, Ints... values) {
  const int64_t given[] = {static_cast<int64_t>(values)..., 0};
  constexpr int count = sizeof...(Ints);
  int dynamic = 0;
  for (int d = 0; d < 5; ++d) dynamic += fixed[d] == DYNAMIC;
  int next = 0;
  for (int d = 0; d < 5; ++d) {
    if (fixed[d] != DYNAMIC)
      out[d] = fixed[d];
    else if (count == 5)
      out[d] = given[d];
    else if (count > 0 && next < count && count == dynamic)
      out[d] = given[next++];
    else
      out[d] = fallback;
  }
}

template <typename... Ints>
constexpr bool kAllIntegral = (std::is_integral_v<Ints> && ...);

}  // namespace sim

template <int64_t N1 = DYNAMIC, int64_t N2 = DYNAMIC, int64_t N3 = DYNAMIC, int64_t N4 = DYNAMIC,
          int64_t N5 = DYNAMIC>
struct Shape {
  static constexpr int64_t staticShape[5] = {N1, N2, N3, N4, N5};
  static constexpr int kDynamic =
      (N1 == DYNAMIC) + (N2 == DYNAMIC) + (N3 == DYNAMIC) + (N4 == DYNAMIC) + (N5 == DYNAMIC);
  int64_t shape[5];

  Shape() { sim::FillExtents(shape, staticShape, 1); }
  template <typename... Ints, typename = std::enable_if_t<(sizeof...(Ints) > 0) && sim::kAllIntegral<Ints...>>>
  Shape(Ints... values) {
    static_assert(sizeof...(Ints) == kDynamic || sizeof...(Ints) == 5,
                  "a Shape takes one value per DYNAMIC dimension, or all five");
    sim::FillExtents(shape, staticShape, 1, values...);
  }
};

template <int64_t S1 = DYNAMIC, int64_t S2 = DYNAMIC, int64_t S3 = DYNAMIC, int64_t S4 = DYNAMIC,
          int64_t S5 = DYNAMIC>
struct Stride {
  static constexpr int64_t staticStride[5] = {S1, S2, S3, S4, S5};
  static constexpr int kDynamic =
      (S1 == DYNAMIC) + (S2 == DYNAMIC) + (S3 == DYNAMIC) + (S4 == DYNAMIC) + (S5 == DYNAMIC);
  int64_t stride[5];

  Stride() { sim::FillExtents(stride, staticStride, 1); }
  template <typename... Ints, typename = std::enable_if_t<(sizeof...(Ints) > 0) && sim::kAllIntegral<Ints...>>>
  Stride(Ints... values) {
    static_assert(sizeof...(Ints) == kDynamic || sizeof...(Ints) == 5,
                  "a Stride takes one value per DYNAMIC dimension, or all five");
    sim::FillExtents(stride, staticStride, 1, values...);
  }
};

template <typename Element_, typename Shape_, typename Stride_, Layout Layout_ = Layout::ND>
struct GlobalTensor {
  using DType = std::remove_cv_t<Element_>;
  using ShapeType = Shape_;
  using StrideType = Stride_;
  static constexpr Layout layout = Layout_;
  static constexpr const int64_t* staticShape = Shape_::staticShape;
  static constexpr const int64_t* staticStride = Stride_::staticStride;

  GlobalTensor() = default;
  GlobalTensor(__gm__ DType* data, const Shape_& shape = Shape_(), const Stride_& stride = Stride_())
      : data_(data), shape_(shape), stride_(stride) {}

  __gm__ DType* data() const { return data_; }
  int64_t GetShape(int dim) const { return shape_.shape[dim]; }
  int64_t GetStride(int dim) const { return stride_.stride[dim]; }
  void SetAddr(__gm__ DType* data) { data_ = data; }

  // The 2-D view TLOAD/TSTORE move: rows over the first four dimensions, columns over the last.
  int64_t Rows() const { return shape_.shape[0] * shape_.shape[1] * shape_.shape[2] * shape_.shape[3]; }
  int64_t Cols() const { return shape_.shape[4]; }
  int64_t OffsetOf(int64_t row, int64_t col) const {
    int64_t offset = col * stride_.stride[4];
    for (int d = 3; d >= 0; --d) {
      offset += (row % shape_.shape[d]) * stride_.stride[d];
      row /= shape_.shape[d];
    }
    return offset;
  }

 private:
  __gm__ DType* data_ = nullptr;
  Shape_ shape_;
  Stride_ stride_;
};

}  // namespace pto

#endif  // PYPTO_SIM_PTO_GLOBAL_TENSOR_H_
