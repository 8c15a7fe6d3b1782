// Vectorized element-wise tile kernels (Highway, dispatched once per call to the best target the
// host supports). Tiles are dense, so one call covers a whole tile. `dst` may be the same array as
// `a` or `b` (in-place reuse); partially overlapping arrays are not allowed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pypto::sim {

enum class BinaryOp : uint8_t { Add, Sub, Mul, Div };

void BinaryF32(BinaryOp op, float* dst, const float* a, const float* b, size_t n);

// Integer arithmetic wraps around (two's complement); division truncates toward zero.
// Returns false when a divisor is zero (dst is then only partly written).
bool BinaryI32(BinaryOp op, int32_t* dst, const int32_t* a, const int32_t* b, size_t n);

// The Highway target the kernels run on, e.g. "AVX2" (for logs and listings).
const char* TileOpsTarget();

}  // namespace pypto::sim
