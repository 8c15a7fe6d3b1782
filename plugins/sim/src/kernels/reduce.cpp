// Reductions along one axis of a dense tile. Row reductions (along contiguous memory) are vector loops
// compiled once per Highway target; column reductions combine whole rows with the element-wise
// kernels, so every step is a contiguous vector pass too.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/reduce.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstring>
#include <limits>
#include <vector>

#include "kernels/elementwise.h"
#include "kernels/reduce.h"
#include "kernels/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace pypto::sim {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Runs of up to this many vectors are summed directly, four accumulators wide; longer runs are split
// in halves. Each lane of an accumulator then adds at most 8 elements before the tree takes over.
constexpr size_t kLeafVectors = 32;

// Per-lane partial sums of p[0, n), pairwise (numpy's scheme on vectors): the rounding error grows
// with log(n) instead of n. Recursion depth is log2(n / (kLeafVectors * lanes)).
template <class D>
hn::Vec<D> PairwiseSum(D d, const float* p, size_t n) {
  const size_t lanes = hn::Lanes(d);
  if (n > kLeafVectors * lanes) {
    const size_t half = n / lanes / 2 * lanes;
    return hn::Add(PairwiseSum(d, p, half), PairwiseSum(d, p + half, n - half));
  }
  auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  size_t i = 0;
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    a0 = hn::Add(a0, hn::LoadU(d, p + i));
    a1 = hn::Add(a1, hn::LoadU(d, p + i + lanes));
    a2 = hn::Add(a2, hn::LoadU(d, p + i + 2 * lanes));
    a3 = hn::Add(a3, hn::LoadU(d, p + i + 3 * lanes));
  }
  for (; i + lanes <= n; i += lanes) a0 = hn::Add(a0, hn::LoadU(d, p + i));
  if (i < n) a1 = hn::Add(a1, LoadTail(d, p + i, n - i, 0.0f));
  return hn::Add(hn::Add(a0, a1), hn::Add(a2, a3));
}

// One vector of f-combined lanes of p[0, n); lanes past n start as `identity`.
template <class D, class F, typename T = hn::TFromD<D>>
HWY_INLINE hn::Vec<D> Fold(D d, const T* p, size_t n, T identity, F f) {
  const size_t lanes = hn::Lanes(d);
  auto acc = hn::Set(d, identity);
  size_t i = 0;
  for (; i + lanes <= n; i += lanes) acc = f(acc, hn::LoadU(d, p + i));
  if (i < n) acc = f(acc, LoadTail(d, p + i, n - i, identity));
  return acc;
}

// The lanes of v multiplied in order (Highway has no product-of-lanes).
template <class D>
HWY_INLINE float ProductOfLanes(D d, hn::Vec<D> v) {
  HWY_ALIGN float lanes[hn::MaxLanes(d)];
  hn::Store(v, d, lanes);
  float product = 1.0f;
  for (size_t i = 0; i < hn::Lanes(d); ++i) product *= lanes[i];
  return product;
}

float RowF32(ReduceOp op, const float* p, size_t n) {
  const hn::ScalableTag<float> d;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  switch (op) {
    case ReduceOp::Sum: return hn::GetLane(hn::SumOfLanes(d, PairwiseSum(d, p, n)));
    case ReduceOp::Prod: return ProductOfLanes(d, Fold(d, p, n, 1.0f, MulV{}));
    // MaxV/MinV keep a NaN once a lane has one; the lane reduction itself would drop it.
    case ReduceOp::Max: {
      const auto acc = Fold(d, p, n, -kInf, MaxV{});
      return hn::AllFalse(d, hn::IsNaN(acc)) ? hn::GetLane(hn::MaxOfLanes(d, acc)) : kNaN;
    }
    case ReduceOp::Min: {
      const auto acc = Fold(d, p, n, kInf, MinV{});
      return hn::AllFalse(d, hn::IsNaN(acc)) ? hn::GetLane(hn::MinOfLanes(d, acc)) : kNaN;
    }
  }
  return 0.0f;
}

// Sum (wrapping), Max and Min; the caller rejects Prod.
int32_t RowI32(ReduceOp op, const int32_t* p, size_t n) {
  const hn::ScalableTag<int32_t> d;
  switch (op) {
    case ReduceOp::Sum: return hn::GetLane(hn::SumOfLanes(d, Fold(d, p, n, 0, AddV{})));
    case ReduceOp::Max:
      return hn::GetLane(hn::MaxOfLanes(d, Fold(d, p, n, std::numeric_limits<int32_t>::min(), MaxV{})));
    case ReduceOp::Min:
      return hn::GetLane(hn::MinOfLanes(d, Fold(d, p, n, std::numeric_limits<int32_t>::max(), MinV{})));
    case ReduceOp::Prod: break;
  }
  return 0;
}

// Row r is read in full before dst[r] is written, and dst[r] lies at or before row r's start, so dst
// may be src.
void RowReduceF32Kernel(ReduceOp op, float* dst, const float* src, size_t rows, size_t cols) {
  for (size_t r = 0; r < rows; ++r) dst[r] = RowF32(op, src + r * cols, cols);
}
void RowReduceI32Kernel(ReduceOp op, int32_t* dst, const int32_t* src, size_t rows, size_t cols) {
  for (size_t r = 0; r < rows; ++r) dst[r] = RowI32(op, src + r * cols, cols);
}

}  // namespace HWY_NAMESPACE
}  // namespace pypto::sim
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace pypto::sim {

HWY_EXPORT(RowReduceF32Kernel);
HWY_EXPORT(RowReduceI32Kernel);

namespace {

// Column sums add runs of up to this many rows in order and combine runs pairwise.
constexpr size_t kLeafRows = 8;

BinaryOp Combiner(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return BinaryOp::Add;
    case ReduceOp::Max: return BinaryOp::Max;
    case ReduceOp::Min: return BinaryOp::Min;
    case ReduceOp::Prod: return BinaryOp::Mul;
  }
  return BinaryOp::Add;
}

template <typename T>
T Identity(ReduceOp op) {
  constexpr bool kFloat = std::numeric_limits<T>::has_infinity;
  switch (op) {
    case ReduceOp::Sum: return T{0};
    case ReduceOp::Prod: return T{1};
    case ReduceOp::Max: return kFloat ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::min();
    case ReduceOp::Min: return kFloat ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
  }
  return T{0};
}

void Combine(BinaryOp op, float* acc, const float* row, size_t n) { BinaryF32(op, acc, acc, row, n); }
void Combine(BinaryOp op, int32_t* acc, const int32_t* row, size_t n) { BinaryI32(op, acc, acc, row, n); }

// out = rows [lo, hi) of src combined with op: runs of kLeafRows rows in order, runs pairwise. `spare`
// holds one row per level of recursion below this one.
template <typename T>
void CombineRows(BinaryOp op, const T* src, size_t cols, size_t lo, size_t hi, T* out, T* spare) {
  if (hi - lo <= kLeafRows) {
    std::memcpy(out, src + lo * cols, cols * sizeof(T));
    for (size_t r = lo + 1; r < hi; ++r) Combine(op, out, src + r * cols, cols);
    return;
  }
  const size_t mid = lo + (hi - lo) / 2;
  CombineRows(op, src, cols, lo, mid, out, spare);
  CombineRows(op, src, cols, mid, hi, spare, spare + cols);
  Combine(op, out, spare, cols);
}

// The result is formed in scratch and copied out last, so dst may be src.
template <typename T>
void ColReduce(ReduceOp op, T* dst, const T* src, size_t rows, size_t cols) {
  if (cols == 0) return;
  if (rows == 0) {
    for (size_t c = 0; c < cols; ++c) dst[c] = Identity<T>(op);
    return;
  }
  size_t levels = 1;
  for (size_t run = kLeafRows; run < rows; run *= 2) ++levels;
  std::vector<T> scratch(cols * (levels + 1));
  CombineRows(Combiner(op), src, cols, 0, rows, scratch.data(), scratch.data() + cols);
  std::memcpy(dst, scratch.data(), cols * sizeof(T));
}

}  // namespace

void RowReduceF32(ReduceOp op, float* dst, const float* src, size_t rows, size_t cols) {
  HWY_DYNAMIC_DISPATCH(RowReduceF32Kernel)(op, dst, src, rows, cols);
}

void ColReduceF32(ReduceOp op, float* dst, const float* src, size_t rows, size_t cols) {
  ColReduce(op, dst, src, rows, cols);
}

bool RowReduceI32(ReduceOp op, int32_t* dst, const int32_t* src, size_t rows, size_t cols) {
  if (op == ReduceOp::Prod) return false;
  HWY_DYNAMIC_DISPATCH(RowReduceI32Kernel)(op, dst, src, rows, cols);
  return true;
}

bool ColReduceI32(ReduceOp op, int32_t* dst, const int32_t* src, size_t rows, size_t cols) {
  if (op == ReduceOp::Prod) return false;
  ColReduce(op, dst, src, rows, cols);
  return true;
}

}  // namespace pypto::sim
#endif  // HWY_ONCE
