// The narrow floating-point formats of MX block-scale matmul: FP4 (E2M1, two to a byte, the
// element of even index in the low nibble, as torch's float4_e2m1fn_x2 packs them), FP8E4M3FN,
// FP8E5M2 and the E8M0 scale exponent; and the MX product itself.
//
// Encoding rounds to the nearest value, ties to the even code, and saturates to the largest finite
// value (NaN encodes as the format's NaN, or 0 in FP4, which has none). Decoding is exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pypto/ir/dtype.h"

namespace pypto::sim {

// FP4, FP8E4M3FN and FP8E5M2: the formats tile.cast converts to and from.
bool IsMxFormat(ir::DataType dtype);

float DecodeMx(ir::DataType dtype, uint8_t code);   // FP4 (a nibble), FP8E4M3FN, FP8E5M2, FP8E8M0
uint8_t EncodeMx(ir::DataType dtype, float value);  // FP4 (a nibble), FP8E4M3FN, FP8E5M2

// n elements of `dtype` at src as floats (FP4 packed), and back.
std::vector<float> DecodeMxArray(ir::DataType dtype, const std::byte* src, size_t n);
void EncodeMxArray(ir::DataType dtype, std::byte* dst, const std::vector<float>& values);

// dst [m, n] (+)= sum over k of a[i, k] 2^(sa[i, k/32] - 127) b[k, j] 2^(sb[k/32, j] - 127), FP8E4M3FN
// a [m, k] and b [k, n] row-major, the scales as the cube's scale buffers hold them (ir::mx_layout.h:
// MX_A_ZZ blocks for a's [m, k/32], MX_B_NN for b's [k/32, n]). Products accumulate in FP32, in K order.
void MatmulMx(float* dst, const uint8_t* a, const uint8_t* a_scale, const uint8_t* b, const uint8_t* b_scale, size_t m,
              size_t k, size_t n, bool accumulate);

}  // namespace pypto::sim
