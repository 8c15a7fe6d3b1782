// Row and column reductions (TROWSUM/TROWMAX/TROWMIN/TROWPROD/TROWARGMAX/TROWARGMIN into a Rows x 1
// tile, TCOLSUM/TCOLMAX/TCOLMIN/TCOLPROD/TCOLARGMAX/TCOLARGMIN into a 1 x Cols tile, over the source's
// valid region; an arg-reduction writes the first index on ties) and the broadcasts: TROWEXPAND / TCOLEXPAND
// copy a column / row across a tile, and TROWEXPAND<OP> / TCOLEXPAND<OP> combine src0 with src1's
// value for the row (src1(r, 0)) or the column (src1(0, c)). Sums accumulate in float for 16-bit
// floats. The scratch tiles of the device's forms are accepted and unused.
#ifndef PYPTO_SIM_PTO_REDUCE_EXPAND_H_
#define PYPTO_SIM_PTO_REDUCE_EXPAND_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "pto/elementwise.h"

namespace pto {
namespace sim {

// Reduces each valid row of src with `op` from `init`; all sums are taken before dst is written, as
// dst may share src's bytes.
template <typename Dst, typename Src, typename Op>
void ReduceRows(Dst& dst, Src& src, Op op, ComputeT<typename Src::DType> init, const Where& where, const char* name) {
  CheckAssigned(where, name, dst, src);
  const int64_t rows = src.GetValidRow(), cols = src.GetValidCol();
  ComputeT<typename Src::DType> result[Src::Rows];
  for (int64_t r = 0; r < rows; ++r) {
    auto acc = init;
    for (int64_t c = 0; c < cols; ++c) acc = op(acc, Load(src.At(r, c)));
    result[r] = acc;
  }
  for (int64_t r = 0; r < rows; ++r) dst.At(r, 0) = Convert<typename Dst::DType>(result[r]);
}

template <typename Dst, typename Src, typename Op>
void ReduceCols(Dst& dst, Src& src, Op op, const Where& where, const char* name) {
  CheckAssigned(where, name, dst, src);
  const int64_t rows = src.GetValidRow(), cols = src.GetValidCol();
  ComputeT<typename Src::DType> result[Src::Cols];
  for (int64_t c = 0; c < cols; ++c) result[c] = Load(src.At(0, c));
  for (int64_t r = 1; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) result[c] = op(result[c], Load(src.At(r, c)));
  for (int64_t c = 0; c < cols; ++c) dst.At(0, c) = Convert<typename Dst::DType>(result[c]);
}

template <typename T>
T Lowest() {
  return std::is_floating_point_v<T> ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
}
template <typename T>
T Highest() {
  return std::is_floating_point_v<T> ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
}

inline constexpr auto kSum = [](auto a, auto b) { return a + b; };
inline constexpr auto kMax = [](auto a, auto b) { return std::max(a, b); };
inline constexpr auto kMin = [](auto a, auto b) { return std::min(a, b); };

}  // namespace sim

template <typename Dst, typename Src, typename Tmp>
inline void TROWSUM(Dst& dst, Src& src, Tmp&, sim::Where where = sim::Where::Here()) {
  sim::ReduceRows(dst, src, sim::kSum, 0, where, "TROWSUM");
}
template <typename Dst, typename Src, typename Tmp>
inline void TROWMAX(Dst& dst, Src& src, Tmp&, sim::Where where = sim::Where::Here()) {
  sim::ReduceRows(dst, src, sim::kMax, sim::Lowest<sim::ComputeT<typename Src::DType>>(), where, "TROWMAX");
}
template <typename Dst, typename Src, typename Tmp>
inline void TROWMIN(Dst& dst, Src& src, Tmp&, sim::Where where = sim::Where::Here()) {
  sim::ReduceRows(dst, src, sim::kMin, sim::Highest<sim::ComputeT<typename Src::DType>>(), where, "TROWMIN");
}

template <typename Dst, typename Src>
inline void TCOLSUM(Dst& dst, Src& src, sim::Where where = sim::Where::Here()) {
  sim::ReduceCols(dst, src, sim::kSum, where, "TCOLSUM");
}
template <typename Dst, typename Src, typename Tmp>
inline void TCOLSUM(Dst& dst, Src& src, Tmp&, bool /*isBinary*/, sim::Where where = sim::Where::Here()) {
  sim::ReduceCols(dst, src, sim::kSum, where, "TCOLSUM");
}
template <typename Dst, typename Src>
inline void TCOLMAX(Dst& dst, Src& src, sim::Where where = sim::Where::Here()) {
  sim::ReduceCols(dst, src, sim::kMax, where, "TCOLMAX");
}
template <typename Dst, typename Src>
inline void TCOLMIN(Dst& dst, Src& src, sim::Where where = sim::Where::Here()) {
  sim::ReduceCols(dst, src, sim::kMin, where, "TCOLMIN");
}

template <typename Dst, typename Src, typename Tmp>
inline void TROWPROD(Dst& dst, Src& src, Tmp&, sim::Where where = sim::Where::Here()) {
  sim::ReduceRows(dst, src, [](auto a, auto b) { return a * b; }, 1, where, "TROWPROD");
}
template <typename Dst, typename Src>
inline void TCOLPROD(Dst& dst, Src& src, sim::Where where = sim::Where::Here()) {
  sim::ReduceCols(dst, src, [](auto a, auto b) { return a * b; }, where, "TCOLPROD");
}

// The index of each row's / column's largest (smallest) valid element, the first one on ties.
namespace sim {
template <bool kMax, typename Dst, typename Src>
void ArgRows(Dst& dst, Src& src, const Where& where, const char* name) {
  CheckAssigned(where, name, dst, src);
  const int64_t rows = src.GetValidRow(), cols = src.GetValidCol();
  typename Dst::DType result[Src::Rows];
  for (int64_t r = 0; r < rows; ++r) {
    int64_t best = 0;
    for (int64_t c = 1; c < cols; ++c)
      if (kMax ? Load(src.At(r, c)) > Load(src.At(r, best)) : Load(src.At(r, c)) < Load(src.At(r, best))) best = c;
    result[r] = static_cast<typename Dst::DType>(best);
  }
  for (int64_t r = 0; r < rows; ++r) dst.At(r, 0) = result[r];
}
template <bool kMax, typename Dst, typename Src>
void ArgCols(Dst& dst, Src& src, const Where& where, const char* name) {
  CheckAssigned(where, name, dst, src);
  const int64_t rows = src.GetValidRow(), cols = src.GetValidCol();
  typename Dst::DType result[Src::Cols];
  for (int64_t c = 0; c < cols; ++c) {
    int64_t best = 0;
    for (int64_t r = 1; r < rows; ++r)
      if (kMax ? Load(src.At(r, c)) > Load(src.At(best, c)) : Load(src.At(r, c)) < Load(src.At(best, c))) best = r;
    result[c] = static_cast<typename Dst::DType>(best);
  }
  for (int64_t c = 0; c < cols; ++c) dst.At(0, c) = result[c];
}
}  // namespace sim

template <typename Dst, typename Src, typename Tmp>
inline void TROWARGMAX(Dst& dst, Src& src, Tmp&, sim::Where where = sim::Where::Here()) {
  sim::ArgRows<true>(dst, src, where, "TROWARGMAX");
}
template <typename Dst, typename Src, typename Tmp>
inline void TROWARGMIN(Dst& dst, Src& src, Tmp&, sim::Where where = sim::Where::Here()) {
  sim::ArgRows<false>(dst, src, where, "TROWARGMIN");
}
template <typename Dst, typename Src, typename Tmp>
inline void TCOLARGMAX(Dst& dst, Src& src, Tmp&, sim::Where where = sim::Where::Here()) {
  sim::ArgCols<true>(dst, src, where, "TCOLARGMAX");
}
template <typename Dst, typename Src, typename Tmp>
inline void TCOLARGMIN(Dst& dst, Src& src, Tmp&, sim::Where where = sim::Where::Here()) {
  sim::ArgCols<false>(dst, src, where, "TCOLARGMIN");
}

template <typename Dst, typename Src>
inline void TROWEXPAND(Dst& dst, Src& src, sim::Where where = sim::Where::Here()) {
  sim::CheckAssigned(where, "TROWEXPAND", dst, src);
  sim::ForValid(dst, [&](int64_t r, int64_t) { return sim::Load(src.At(r, 0)); });
}
template <typename Dst, typename Src>
inline void TCOLEXPAND(Dst& dst, Src& src, sim::Where where = sim::Where::Here()) {
  sim::CheckAssigned(where, "TCOLEXPAND", dst, src);
  sim::ForValid(dst, [&](int64_t, int64_t c) { return sim::Load(src.At(0, c)); });
}

#define PYPTO_SIM_PTO_EXPAND(NAME, ROW, COL, EXPR)                                                       \
  template <typename Dst, typename Src0, typename Src1>                                                   \
  inline void NAME(Dst& dst, Src0& src0, Src1& src1, sim::Where where = sim::Where::Here()) {             \
    sim::CheckAssigned(where, #NAME, dst, src0, src1);                                                    \
    sim::ForValid(dst, [&](int64_t r, int64_t c) {                                                        \
      const auto a = sim::Load(src0.At(r, c));                                                            \
      const auto b = sim::Load(src1.At(ROW, COL));                                                        \
      return EXPR;                                                                                        \
    });                                                                                                   \
  }
#define PYPTO_SIM_PTO_EXPAND_BOTH(OP, EXPR)                   \
  PYPTO_SIM_PTO_EXPAND(TROWEXPAND##OP, r, 0, EXPR)            \
  PYPTO_SIM_PTO_EXPAND(TCOLEXPAND##OP, 0, c, EXPR)
PYPTO_SIM_PTO_EXPAND_BOTH(ADD, a + b)
PYPTO_SIM_PTO_EXPAND_BOTH(SUB, a - b)
PYPTO_SIM_PTO_EXPAND_BOTH(MUL, a * b)
PYPTO_SIM_PTO_EXPAND_BOTH(DIV, a / b)
PYPTO_SIM_PTO_EXPAND_BOTH(MAX, std::max(a, b))
PYPTO_SIM_PTO_EXPAND_BOTH(MIN, std::min(a, b))
PYPTO_SIM_PTO_EXPAND_BOTH(EXPDIF, std::exp(a - b))
#undef PYPTO_SIM_PTO_EXPAND_BOTH
#undef PYPTO_SIM_PTO_EXPAND

}  // namespace pto

#endif  // PYPTO_SIM_PTO_REDUCE_EXPAND_H_
