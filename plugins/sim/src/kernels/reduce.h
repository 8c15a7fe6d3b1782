// Reductions of a dense row-major [rows, cols] tile along one axis, vectorized with Highway.
// `dst` may be the same array as `src` (the result then overwrites the start of the tile).
//
// Float sums are pairwise (blocks of vector accumulators combined in a tree), so their rounding
// error grows with log(n), not n. Max and Min are NaN when any element is NaN (torch.amax). An empty
// axis gives the identity: 0 for Sum, 1 for Prod, -inf for Max and +inf for Min (INT32_MIN/INT32_MAX
// for integers).
#pragma once

#include <cstddef>
#include <cstdint>

namespace pypto::sim {

enum class ReduceOp : uint8_t { Sum, Max, Min, Prod };

// Collapses the last axis: [rows, cols] -> [rows, 1]; dst has `rows` elements.
void RowReduceF32(ReduceOp op, float* dst, const float* src, size_t rows, size_t cols);

// Collapses the first axis: [rows, cols] -> [1, cols]; dst has `cols` elements.
void ColReduceF32(ReduceOp op, float* dst, const float* src, size_t rows, size_t cols);

// Integer Sum (wrapping), Max and Min; returns false, writing nothing, for Prod.
bool RowReduceI32(ReduceOp op, int32_t* dst, const int32_t* src, size_t rows, size_t cols);
bool ColReduceI32(ReduceOp op, int32_t* dst, const int32_t* src, size_t rows, size_t cols);

}  // namespace pypto::sim
